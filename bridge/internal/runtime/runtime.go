// Package runtime runs a pod's containers inside its Tessera job. Pure text generation here: the
// job's batch script (Script), the paths it writes (ContainerDir), the names it gives
// (ContainerName); reading what it wrote (exits.go) and exec (exec_linux.go) are the only I/O.
//
// A pod that is one container of the host runtime is not wrapped: its job runs the command
// directly (translate.PodToJob). Every other pod (runtime podman, several containers, init
// containers) runs through the script made here, which:
//   - makes <outDir>/k8s-<ns>-<pod>-<jobid>.d/ (ContainerDir of the job's output file);
//   - runs the init containers one after the other, then starts every container at once, each
//     with its output in <dir>/<container>.log and, when it ends, its exit code (128+signal
//     for a signal) in <dir>/<container>.exit;
//   - stops at the first init container that fails, exiting with its code;
//   - exits with the first non-zero exit code of the containers in pod order, else 0;
//   - forwards SIGTERM/SIGINT/SIGHUP to the running containers and still records their codes;
//   - splits the job's GPUs (CUDA_VISIBLE_DEVICES) between the containers in pod order, each
//     getting as many as it asked for (init containers each draw from the whole list again);
//     a container that asked for none sees no CUDA_VISIBLE_DEVICES.
//
// Runtime podman: each container is `podman run` of its image, rootless as the job's user
// (--userns=keep-id: the same uid inside), host network, the job's working directory mounted at
// the same path, the container's env given to podman by name (--env NAME: the values are set by
// `env` just before podman starts, not in podman's arguments). No
// cgroup of its own: on cgroup v2 --cgroups=disabled, on v1 rootless podman cannot make any,
// so the container's processes stay in the job's cgroup (its cores, memory, devices). With
// GPUs, the job's /dev/nvidia<index> devices (and nvidiactl, nvidia-uvm) are passed when the
// node has them. Containers are named "tessera-<jobid>-<container>" (exec finds them by it).
package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The runtimes (mapping.Entry.Runtime; "" is host).
const (
	Host   = "host"
	Podman = "podman"
)

// Config is the bridge-wide part: how podman is run on the nodes.
type Config struct {
	Podman     string // podman on the nodes ("" = "podman" from the job's PATH)
	OCIRuntime string // podman --runtime (e.g. runc, crun; "" = podman's default)
}

// EnvVar is one resolved variable of a container.
type EnvVar struct{ Name, Value string }

// Container is what the script needs of one container.
type Container struct {
	Name       string
	Image      string
	Command    []string // podman: replaces the image's entrypoint when set
	Args       []string
	Env        []EnvVar
	WorkingDir string // "" = the pod's Workdir
	GPUs       uint32 // of the job's GPUs (or MIG instances) this container gets
	Pull       string // podman --pull: always, missing, never ("" = missing)
}

// Pod is the pod as the script runs it.
type Pod struct {
	Namespace, Name string
	Runtime         string // Host or Podman
	Workdir         string // the job's working directory (absolute)
	OutDir          string // the job's output directory (absolute)
	Init, Main      []Container
}

// Wrapped says whether a pod runs through Script (else its job runs the one command).
func Wrapped(runtime string, containers, initContainers int) bool {
	return runtime == Podman || containers != 1 || initContainers != 0
}

// StdoutPattern is the job's output file (Slurm pattern, %j = job id); ContainerDir derives the
// containers' directory from the file's resolved path.
func StdoutPattern(outDir, ns, pod string) string {
	return fmt.Sprintf("%s/k8s-%s-%s-%%j.out", outDir, ns, pod)
}

// ContainerDir is the directory the script writes the containers' logs and exit codes to, from
// the job's resolved output path.
func ContainerDir(stdoutPath string) string {
	return strings.TrimSuffix(stdoutPath, ".out") + ".d"
}

// ContainerName is a podman container's name in job `jobID`.
func ContainerName(jobID uint64, container string) string {
	return fmt.Sprintf("tessera-%d-%s", jobID, container)
}

// Script is the job's batch script for the pod.
func Script(p Pod, cfg Config) (string, error) {
	if p.Runtime != Host && p.Runtime != Podman {
		return "", fmt.Errorf("runtime %q is not %q or %q", p.Runtime, Host, Podman)
	}
	if len(p.Main) == 0 {
		return "", fmt.Errorf("no containers")
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("#!/bin/sh")
	w("# tessera-bridge: pod %s/%s, runtime %s. Per container: <dir>/NAME.log, <dir>/NAME.exit.",
		p.Namespace, p.Name, p.Runtime)
	w("set -f")
	w(`d=%s"$SLURM_JOB_ID".d`, q(fmt.Sprintf("%s/k8s-%s-%s-", p.OutDir, p.Namespace, p.Name)))
	w(`mkdir -p "$d" || exit 1`)
	b.WriteString(scriptHelpers + "\n")
	for i, c := range p.Init {
		if err := container(w, p, cfg, fmt.Sprintf("i%d", i), c); err != nil {
			return "", fmt.Errorf("init container %q: %w", c.Name, err)
		}
	}
	for i, c := range p.Main {
		if err := container(w, p, cfg, fmt.Sprintf("c%d", i), c); err != nil {
			return "", fmt.Errorf("container %q: %w", c.Name, err)
		}
	}
	for i, c := range p.Init {
		w(`_gpus=$gpus_all; take %d; start i%d %s "$_out"; waitfor "$_pid"; record %s`,
			c.GPUs, i, q(c.Name), q(c.Name))
		w(`[ "$_rc" -eq 0 ] || { echo "init container %s exited $_rc" >&2; exit "$_rc"; }`, c.Name)
	}
	w(`_gpus=$gpus_all`)
	for i, c := range p.Main {
		w(`take %d; start c%d %s "$_out"; p%d=$_pid`, c.GPUs, i, q(c.Name), i)
	}
	w("rc=0")
	for i, c := range p.Main {
		w(`waitfor "$p%d"; record %s; [ "$rc" -ne 0 ] || rc=$_rc`, i, q(c.Name))
	}
	w(`exit "$rc"`)
	return b.String(), nil
}

// scriptHelpers: take N (the next N entries of $_gpus into $_out), start FN NAME GPUS (runs
// FN in the background, output to the log, pid in $_pid and $_pids), waitfor PID (its exit
// status in $_rc, waiting through trapped signals), record NAME (writes $_rc), signals
// forwarded to the children.
const scriptHelpers = `gpus_all=${CUDA_VISIBLE_DEVICES:-}
_pids=
take() {
  _n=$1; _out=
  while [ "$_n" -gt 0 ] && [ -n "$_gpus" ]; do
    _g=${_gpus%%,*}
    if [ "$_g" = "$_gpus" ]; then _gpus=; else _gpus=${_gpus#*,}; fi
    _out=${_out:+$_out,}$_g; _n=$((_n-1))
  done
}
gpu_env() {
  if [ -n "$1" ]; then export CUDA_VISIBLE_DEVICES="$1" NVIDIA_VISIBLE_DEVICES="$1"
  else unset CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES; fi
}
gpu_devices() {
  _devs=
  [ -n "$1" ] || return 0
  _i=${TESSERA_JOB_GPUS:-}
  while [ -n "$_i" ]; do
    _g=${_i%%,*}
    if [ "$_g" = "$_i" ]; then _i=; else _i=${_i#*,}; fi
    [ -c "/dev/nvidia$_g" ] && _devs="$_devs --device=/dev/nvidia$_g"
  done
  for _f in /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools; do
    [ -c "$_f" ] && _devs="$_devs --device=$_f"
  done
  return 0
}
start() {
  ( "$1" "$3" ) >"$d/$2.log" 2>&1 </dev/null &
  _pid=$!; _pids="$_pids $_pid"
}
waitfor() {
  while :; do
    wait "$1"; _rc=$?
    kill -0 "$1" 2>/dev/null || return 0
  done
}
record() { echo "$_rc" >"$d/$1.exit"; }
trap 'kill -TERM $_pids 2>/dev/null' TERM INT HUP
_cg=
[ -f /sys/fs/cgroup/cgroup.controllers ] && _cg=--cgroups=disabled`

// container writes the shell function FN that runs one container (its GPUs in $1).
func container(w func(string, ...any), p Pod, cfg Config, fn string, c Container) error {
	wd := c.WorkingDir
	if wd == "" {
		wd = p.Workdir
	}
	env := make([]string, 0, len(c.Env))
	for _, e := range c.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			return fmt.Errorf("environment variable name %q cannot be passed", e.Name)
		}
		env = append(env, q(e.Name+"="+e.Value))
	}
	w("%s() {", fn)
	w(`  gpu_env "$1"`)
	switch p.Runtime {
	case Host:
		argv := append(append([]string{}, c.Command...), c.Args...)
		if len(c.Command) == 0 {
			return fmt.Errorf("no command: the host runtime runs the container's command on the " +
				"node and does not read the image's entrypoint")
		}
		w("  cd %s || exit 127", q(wd))
		w("  exec env -- %s", join(append(env, qs(argv)...)))
	case Podman:
		if c.Image == "" {
			return fmt.Errorf("no image")
		}
		pull := c.Pull
		if pull == "" {
			pull = "missing"
		}
		name := `"tessera-$SLURM_JOB_ID-"` + q(c.Name)
		args := append(qs(podmanBase(cfg)), "run", "--rm", "--name", name, "--network=host",
			"--userns=keep-id", "--pull="+q(pull), "$_cg", "-v", q(p.Workdir+":"+p.Workdir),
			"-w", q(wd))
		for _, e := range c.Env {
			args = append(args, "--env", q(e.Name))
		}
		if c.GPUs > 0 {
			args = append(args, "--env", "CUDA_VISIBLE_DEVICES", "--env", "NVIDIA_VISIBLE_DEVICES", "$_devs")
			w(`  gpu_devices "$1"`)
		}
		if len(c.Command) > 0 {
			ep, _ := json.Marshal(c.Command)
			args = append(args, "--entrypoint", q(string(ep)))
		}
		args = append(args, q(c.Image))
		args = append(args, qs(c.Args)...)
		w("  cd %s || exit 127", q(p.Workdir))
		// A container of the same name left by an earlier job of this id (a test cluster's ids
		// start at 1 again) goes first, silently: `run --replace` would print its name into
		// the container's log.
		w("  %s rm -f --ignore %s >/dev/null 2>&1", join(qs(podmanBase(cfg))), name)
		if len(env) > 0 {
			w("  exec env -- %s %s", join(env), join(args))
		} else {
			w("  exec %s", join(args))
		}
	}
	w("}")
	return nil
}

// podmanBase is podman with its global options: cgroupfs (a job has no systemd user session),
// events to a file (no journald), the configured OCI runtime.
func podmanBase(cfg Config) []string {
	podman := cfg.Podman
	if podman == "" {
		podman = "podman"
	}
	out := []string{podman}
	if cfg.OCIRuntime != "" {
		out = append(out, "--runtime", cfg.OCIRuntime)
	}
	return append(out, "--cgroup-manager=cgroupfs", "--events-backend=file")
}

// q quotes one word for sh.
func q(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func qs(words []string) []string {
	out := make([]string, len(words))
	for i, s := range words {
		out[i] = q(s)
	}
	return out
}

func join(words []string) string { return strings.Join(words, " ") }
