package runtime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runScript runs the script as the job would (SLURM_JOB_ID set, the job's GPUs in
// CUDA_VISIBLE_DEVICES) and returns its exit code and the containers' directory.
func runScript(t *testing.T, p Pod, gpus string, during func(*exec.Cmd)) (int, string) {
	t.Helper()
	s, err := Script(p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(path, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", path)
	cmd.Env = append(os.Environ(), "SLURM_JOB_ID=42", "CUDA_VISIBLE_DEVICES="+gpus)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during(cmd)
	}
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, filepath.Join(p.OutDir, "k8s-"+p.Namespace+"-"+p.Name+"-42.d")
}

func sh(name, script string, gpus uint32) Container {
	return Container{Name: name, Command: []string{"/bin/sh", "-c", script}, GPUs: gpus,
		Env: []EnvVar{{Name: "WHO", Value: name}, {Name: "QUOTED", Value: "it's \"$x\""}}}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestHostScriptRunsInitThenAllContainersWithTheirOwnExitCodes(t *testing.T) {
	dir := t.TempDir()
	p := Pod{Namespace: "ns", Name: "pod", Runtime: Host, Workdir: dir, OutDir: dir,
		Init: []Container{sh("prep", `echo prepared > "$PWD/prep.txt"; echo init $WHO`, 0)},
		Main: []Container{
			sh("a", `test -f prep.txt || exit 9; echo "$WHO $QUOTED cvd=${CUDA_VISIBLE_DEVICES-unset}"; sleep 0.3; exit 0`, 2),
			sh("b", `echo "$WHO cvd=${CUDA_VISIBLE_DEVICES-unset}"; exit 3`, 0),
			sh("c", `echo "$WHO cvd=${CUDA_VISIBLE_DEVICES-unset}"; kill -9 $$`, 1),
		}}
	code, cdir := runScript(t, p, "GPU-a,GPU-b,GPU-c", nil)
	if code != 3 {
		t.Errorf("job exit %d, want 3 (the first failing container in pod order)", code)
	}
	got := ReadExits(cdir, []string{"prep", "a", "b", "c", "missing"}, uint32(os.Getuid()))
	want := map[string]int32{"prep": 0, "a": 0, "b": 3, "c": 137}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("exit of %s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := got["missing"]; ok {
		t.Errorf("an exit code for a container that does not exist: %v", got)
	}
	if s := read(t, cdir, "prep.log"); s != "init prep" {
		t.Errorf("prep.log %q", s)
	}
	if s := read(t, cdir, "a.log"); s != `a it's "$x" cvd=GPU-a,GPU-b` {
		t.Errorf("a.log %q", s)
	}
	if s := read(t, cdir, "b.log"); s != "b cvd=unset" {
		t.Errorf("b.log %q: a container that asked for no GPU sees none", s)
	}
	if s := read(t, cdir, "c.log"); s != "c cvd=GPU-c" {
		t.Errorf("c.log %q", s)
	}
}

func TestFailingInitContainerStopsThePod(t *testing.T) {
	dir := t.TempDir()
	p := Pod{Namespace: "ns", Name: "pod", Runtime: Host, Workdir: dir, OutDir: dir,
		Init: []Container{sh("one", "exit 0", 0), sh("two", "exit 4", 0), sh("three", "exit 0", 0)},
		Main: []Container{sh("main", "touch ran", 0)}}
	code, cdir := runScript(t, p, "", nil)
	if code != 4 {
		t.Errorf("job exit %d, want 4", code)
	}
	got := ReadExits(cdir, []string{"one", "two", "three", "main"}, uint32(os.Getuid()))
	if len(got) != 2 || got["one"] != 0 || got["two"] != 4 {
		t.Errorf("exits %v: only init containers one and two ran", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the main container ran after a failed init container")
	}
}

func TestSIGTERMReachesContainersAndTheirCodesAreRecorded(t *testing.T) {
	dir := t.TempDir()
	p := Pod{Namespace: "ns", Name: "pod", Runtime: Host, Workdir: dir, OutDir: dir,
		Main: []Container{
			sh("a", `trap 'echo got TERM; exit 7' TERM; touch a.up; while :; do sleep 0.05; done`, 0),
			sh("b", `touch b.up; exec sleep 30`, 0),
		}}
	code, cdir := runScript(t, p, "", func(cmd *exec.Cmd) {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			_, ea := os.Stat(filepath.Join(dir, "a.up"))
			_, eb := os.Stat(filepath.Join(dir, "b.up"))
			if ea == nil && eb == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
	})
	got := ReadExits(cdir, []string{"a", "b"}, uint32(os.Getuid()))
	if got["a"] != 7 || got["b"] != 143 || code != 7 {
		t.Errorf("exits %v, job %d; want a 7, b 143 (SIGTERM), job 7", got, code)
	}
	if s := read(t, cdir, "a.log"); s != "got TERM" {
		t.Errorf("a.log %q", s)
	}
}

func TestPodmanScriptRunsTheImageAsTheUserInTheJob(t *testing.T) {
	p := Pod{Namespace: "ns", Name: "pod", Runtime: Podman, Workdir: "/home/al", OutDir: "/home/al/out",
		Main: []Container{{Name: "main", Image: "localhost/tool:1", Command: []string{"/bin/sh", "-c"},
			Args: []string{"echo $X"}, Env: []EnvVar{{Name: "X", Value: "secret'value"}}, GPUs: 1,
			Pull: "never"},
			{Name: "side", Image: "localhost/tool:1"}}}
	s, err := Script(p, Config{Podman: "/usr/bin/podman", OCIRuntime: "runc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`exec env -- 'X=secret'\''value' '/usr/bin/podman' '--runtime' 'runc' '--cgroup-manager=cgroupfs'`,
		`'--events-backend=file' rm -f --ignore "tessera-$SLURM_JOB_ID-"'main' >/dev/null 2>&1`,
		`run --rm --name "tessera-$SLURM_JOB_ID-"'main' --network=host --userns=keep-id --pull='never' $_cg -v '/home/al:/home/al' -w '/home/al' --env 'X' --env CUDA_VISIBLE_DEVICES --env NVIDIA_VISIBLE_DEVICES $_devs --entrypoint '["/bin/sh","-c"]' 'localhost/tool:1' 'echo $X'`,
		`--pull='missing' $_cg -v '/home/al:/home/al' -w '/home/al' 'localhost/tool:1'`,
		`d='/home/al/out/k8s-ns-pod-'"$SLURM_JOB_ID".d`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "secret'value") {
		t.Error("an env value appears unquoted")
	}
}

func TestScriptRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		p          Pod
	}{
		{"host without command", `container "c": no command`, Pod{Runtime: Host,
			Main: []Container{{Name: "c", Image: "x"}}}},
		{"podman without image", `init container "i": no image`, Pod{Runtime: Podman,
			Init: []Container{{Name: "i"}}, Main: []Container{{Name: "c", Image: "x"}}}},
		{"bad env name", `environment variable name "A=B"`, Pod{Runtime: Host,
			Main: []Container{{Name: "c", Command: []string{"x"}, Env: []EnvVar{{Name: "A=B"}}}}}},
		{"unknown runtime", `runtime "docker"`, Pod{Runtime: "docker", Main: []Container{{Name: "c"}}}},
	} {
		if _, err := Script(tc.p, Config{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestWrapped(t *testing.T) {
	if Wrapped(Host, 1, 0) || !Wrapped(Podman, 1, 0) || !Wrapped(Host, 2, 0) || !Wrapped(Host, 1, 1) {
		t.Error("only one host container runs unwrapped")
	}
	if ContainerDir("/o/k8s-ns-p-7.out") != "/o/k8s-ns-p-7.d" {
		t.Error(ContainerDir("/o/k8s-ns-p-7.out"))
	}
}

// fakeProc builds a /proc with one process of the pod's job (and decoys).
func fakeProc(t *testing.T) string {
	root := t.TempDir()
	mk := func(pid, env, cgroup string) {
		d := filepath.Join(root, pid)
		_ = os.MkdirAll(d, 0o755)
		_ = os.WriteFile(filepath.Join(d, "environ"), []byte(env), 0o644)
		_ = os.WriteFile(filepath.Join(d, "cgroup"), []byte(cgroup), 0o644)
		_ = os.Symlink("/work/dir", filepath.Join(d, "cwd"))
	}
	v1 := "5:memory:/tessera/n1-ab/job_7\n4:cpu,cpuacct:/tessera/n1-ab/job_7\n1:name=systemd:/\n0::/\n"
	mk("10", "A=1\x00KUBERNETES_POD_UID=u-1\x00", "4:memory:/tessera/n1-ab/job_8\n") // another job
	mk("11", "KUBERNETES_POD_UID=u-12\x00", v1)                                      // another pod
	mk("12", "KUBERNETES_POD_UID=u-1\x00HOME=/h\x00", v1)                            // the wrapper
	mk("13", "KUBERNETES_POD_UID=u-1\x00KUBERNETES_CONTAINER_NAME=side\x00", v1)     // container side
	_ = os.MkdirAll(filepath.Join(root, "self"), 0o755)
	_ = os.WriteFile(filepath.Join(root, "self", "mounts"), []byte(
		"cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0\n"+
			"cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"+
			"cgroup /sys/fs/cgroup/systemd cgroup rw,xattr,name=systemd 0 0\n"+
			"cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nsdelegate 0 0\n"+
			"proc /proc proc rw 0 0\n"), 0o644)
	return root
}

func TestFindTaskFindsThePodsProcessInItsJobCgroup(t *testing.T) {
	root := fakeProc(t)
	uid := uint64(os.Getuid())
	task, err := FindTask(root, "u-1", 7, uid, "side")
	if err != nil || task.PID != 13 {
		t.Fatalf("task %+v, %v; want pid 13 (the container's process)", task, err)
	}
	task, err = FindTask(root, "u-1", 7, uid, "main")
	if err != nil || task.PID != 12 || task.Cwd != "/work/dir" {
		t.Fatalf("task %+v, %v; want the wrapper, pid 12", task, err)
	}
	want := []string{"/sys/fs/cgroup/memory/tessera/n1-ab/job_7/cgroup.procs",
		"/sys/fs/cgroup/cpu,cpuacct/tessera/n1-ab/job_7/cgroup.procs",
		"/sys/fs/cgroup/systemd/cgroup.procs", "/sys/fs/cgroup/unified/cgroup.procs"}
	if strings.Join(task.Cgroups, " ") != strings.Join(want, " ") {
		t.Errorf("cgroups %v, want %v", task.Cgroups, want)
	}
	if strings.Join(task.Env, " ") != "KUBERNETES_POD_UID=u-1 HOME=/h" {
		t.Errorf("env %v", task.Env)
	}
	if _, err := FindTask(root, "u-1", 9, uid, ""); err != ErrNoTask {
		t.Errorf("job 9: %v, want ErrNoTask", err)
	}
	if _, err := FindTask(root, "u-1", 7, uid+1, ""); err != ErrNoTask {
		t.Errorf("another uid: %v, want ErrNoTask", err)
	}
}

func TestExecJoinsTheCgroupsAndPassesStdinOutputAndExitCode(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("Exec runs the command as another user: needs root")
	}
	dir := t.TempDir()
	procs := []string{filepath.Join(dir, "a.procs"), filepath.Join(dir, "b.procs")}
	task := &Task{Env: []string{"PATH=/usr/bin:/bin", "FROM_TASK=yes"}, Cwd: "/tmp", Cgroups: procs}
	var out, errb bytes.Buffer
	code, err := Exec(context.Background(), ExecRequest{Task: task, UID: 65534, GID: 65534,
		Argv:  []string{"/bin/sh", "-c", `read l; echo "$l $FROM_TASK $(id -u) $PWD $$"; echo oops >&2; exit 5`},
		Stdin: strings.NewReader("hello\n"), Stdout: &out, Stderr: &errb})
	if err != nil || code != 5 {
		t.Fatalf("code %d err %v", code, err)
	}
	f := strings.Fields(out.String())
	if len(f) != 5 || f[0] != "hello" || f[1] != "yes" || f[2] != "65534" || f[3] != "/tmp" {
		t.Fatalf("stdout %q", out.String())
	}
	for _, p := range procs {
		if got := read(t, dir, filepath.Base(p)); got != f[4] {
			t.Errorf("%s holds %q, want the command's pid %s", p, got, f[4])
		}
	}
	if errb.String() != "oops\n" {
		t.Errorf("stderr %q", errb.String())
	}
	out.Reset()
	code, err = Exec(context.Background(), ExecRequest{Task: task, UID: 65534, GID: 65534,
		Argv:   []string{"/bin/sh", "-c", `test -t 0 && test -t 1 && echo tty; exit 0`},
		Stdout: &out, TTY: true})
	if err != nil || code != 0 || strings.TrimSpace(out.String()) != "tty" {
		t.Errorf("tty: code %d err %v out %q", code, err, out.String())
	}
}

func TestOpenOwnedRefusesLinksAndOtherOwners(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "log")
	_ = os.WriteFile(mine, []byte("x"), 0o644)
	_ = os.Symlink("/etc/hostname", filepath.Join(dir, "link"))
	uid := uint32(os.Getuid())
	if f, err := OpenOwned(mine, uid); err != nil {
		t.Errorf("own file: %v", err)
	} else {
		f.Close()
	}
	if _, err := OpenOwned(filepath.Join(dir, "link"), uid); err == nil {
		t.Error("a symlink was followed")
	}
	if _, err := OpenOwned(mine, uid+1); err == nil {
		t.Error("another user's file was opened")
	}
}

// realCgroups makes a job_<id> cgroup in this host's memory, pids and cgroup2 hierarchies (the
// ones a process can join without more setup) and returns their cgroup.procs files.
func realCgroups(t *testing.T, jobID uint64) []string {
	if os.Getuid() != 0 {
		t.Skip("needs root to make cgroups")
	}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Skip(err)
	}
	var files []string
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		ok := f[2] == "cgroup2"
		if f[2] == "cgroup" {
			for _, o := range strings.Split(f[3], ",") {
				ok = ok || o == "memory" || o == "pids"
			}
		}
		if !ok {
			continue
		}
		dir := filepath.Join(f[1], fmt.Sprintf("tessera-bridge-test-%d", os.Getpid()), fmt.Sprintf("job_%d", jobID))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			continue
		}
		t.Cleanup(func() { _ = os.Remove(dir); _ = os.Remove(filepath.Dir(dir)) })
		files = append(files, filepath.Join(dir, "cgroup.procs"))
	}
	if len(files) == 0 {
		t.Skip("no cgroup hierarchy to make a test cgroup in")
	}
	return files
}

func TestExecFindsARealTaskAndRunsInItsCgroups(t *testing.T) {
	const job = 987654
	files := realCgroups(t, job)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The "task": a process of the job as nobody, in the job's cgroups, with the pod's UID.
	taskDone := make(chan struct{})
	go func() {
		defer close(taskDone)
		_, _ = Exec(ctx, ExecRequest{Task: &Task{Env: []string{"PATH=/usr/bin:/bin", "KUBERNETES_POD_UID=pod-x",
			"MARK=task"}, Cwd: "/", Cgroups: files}, UID: 65534, GID: 65534, Argv: []string{"sleep", "60"},
			Stdout: io.Discard, Stderr: io.Discard})
	}()
	var task *Task
	var err error
	for i := 0; i < 100; i++ {
		if task, err = FindTask("/proc", "pod-x", job, 65534, "main"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the task was not found: %v", err)
	}
	var out bytes.Buffer
	code, err := Exec(ctx, ExecRequest{Task: task, UID: 65534, GID: 65534, Stdout: &out, Stderr: &out,
		Argv: []string{"/bin/sh", "-c", `echo "$MARK $(id -u)"; cat /proc/self/cgroup`}})
	if err != nil || code != 0 {
		t.Fatalf("exec: %d %v %s", code, err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	in := 0
	for _, l := range lines[1:] {
		if strings.HasSuffix(l, fmt.Sprintf("/job_%d", job)) {
			in++
		}
	}
	if lines[0] != "task 65534" || in != len(files) {
		t.Errorf("exec output %q: want the task's env, uid 65534, and all %d job cgroups", out.String(), len(files))
	}
	cancel()
	<-taskDone
}
