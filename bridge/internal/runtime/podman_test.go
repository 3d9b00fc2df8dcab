package runtime

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The podman runtime for real, without ctld: the script of a two-container pod with an init
// container runs as the user in a job_<id> cgroup (as stepd would start it), then exec goes
// into a running container. Needs root, podman and a local image in the user's store
// (tests/bridge/test_bridge_runtime.py sets TESSERA_BRIDGE_PODMAN_USER and _IMAGE, and
// TESSERA_BRIDGE_PODMAN_RUNTIME for podman's --runtime).
func TestPodmanScriptForRealInAJobCgroup(t *testing.T) {
	name, image := os.Getenv("TESSERA_BRIDGE_PODMAN_USER"), os.Getenv("TESSERA_BRIDGE_PODMAN_IMAGE")
	if name == "" || image == "" {
		t.Skip("TESSERA_BRIDGE_PODMAN_USER and TESSERA_BRIDGE_PODMAN_IMAGE not set")
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	const job = 987655
	files := realCgroups(t, job)
	work, err := os.MkdirTemp(u.HomeDir, "podman-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	_ = os.Chown(work, int(uid), int(gid))
	cfg := Config{OCIRuntime: os.Getenv("TESSERA_BRIDGE_PODMAN_RUNTIME")}
	c := func(name, script string, gpus uint32) Container {
		return Container{Name: name, Image: image, Command: []string{"/bin/sh", "-c", script}, GPUs: gpus,
			Pull: "never", Env: []EnvVar{{Name: "KUBERNETES_POD_UID", Value: "pod-oci"},
				{Name: "KUBERNETES_CONTAINER_NAME", Value: name}, {Name: "SECRET", Value: "it's"}}}
	}
	p := Pod{Namespace: "ns", Name: "oci", Runtime: Podman, Workdir: work, OutDir: work,
		Init: []Container{c("prep", "echo prepared > ready", 0)},
		Main: []Container{
			c("train", `cat ready; echo "uid=$(id -u) secret=$SECRET cvd=$CUDA_VISIBLE_DEVICES"; `+
				`grep -c job_987655 /proc/self/cgroup; test -x /bin/busybox && echo image; `+
				`echo inside > /tmp/marker; sleep 20; exit 3`, 1),
			c("side", "echo side; exit 0", 0)}}
	script, err := Script(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(work, "job.sh")
	_ = os.WriteFile(path, []byte(script), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + u.HomeDir, "USER=" + name,
		"SLURM_JOB_ID=" + strconv.Itoa(job), "CUDA_VISIBLE_DEVICES=GPU-one,GPU-two", "KUBERNETES_POD_UID=pod-oci"}
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := Exec(ctx, ExecRequest{Task: &Task{Env: env, Cwd: work, Cgroups: files}, UID: uint32(uid),
			GID: uint32(gid), Argv: []string{"/bin/sh", path}, Stdout: io.Discard, Stderr: io.Discard})
		done <- result{code, err}
	}()
	dir := filepath.Join(work, fmt.Sprintf("k8s-ns-oci-%d.d", job))
	// exec into the running container: its own /tmp, the user's uid.
	var out strings.Builder
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		out.Reset()
		task, err := FindTask("/proc", "pod-oci", job, uid, "train")
		if err == nil {
			code, err := Exec(ctx, ExecRequest{Task: task, UID: uint32(uid), GID: uint32(gid), Dir: "/",
				Argv:   PodmanExec(cfg, job, "train", []string{"/bin/sh", "-c", "cat /tmp/marker; id -u"}, false, false),
				Stdout: &out, Stderr: io.Discard})
			if err == nil && code == 0 {
				break
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	if got := strings.TrimSpace(out.String()); got != fmt.Sprintf("inside\n%d", uid) {
		t.Errorf("podman exec into train: %q", got)
	}
	r := <-done
	if r.err != nil || r.code != 3 {
		t.Fatalf("job script: exit %d, %v", r.code, r.err)
	}
	exits := ReadExits(dir, []string{"prep", "train", "side"}, uint32(uid))
	if fmt.Sprint(exits) != "map[prep:0 side:0 train:3]" {
		t.Errorf("exits %v", exits)
	}
	log, _ := os.ReadFile(LogPath(dir, "train"))
	want := fmt.Sprintf("prepared\nuid=%d secret=it's cvd=GPU-one\n%d\nimage\n", uid, len(files))
	if string(log) != want {
		t.Errorf("train log %q, want %q (the user's uid inside, its GPU, in the job's %d cgroups)", log, want, len(files))
	}
}
