package provider

// kubectl exec through the kubelet API (RunInContainer): the command runs in the pod's job's
// cgroups as the namespace's user (runtime.Exec); for the podman runtime inside the container
// (podman exec). Needs the job's processes on the bridge's host; otherwise, and for pods that are
// not running, a clear refusal.

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"strconv"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	utilexec "k8s.io/utils/exec"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
)

func (p *Pods) runInContainer(ctx context.Context, ns, name, container string, cmd []string,
	attach api.AttachIO) error {
	t, err := p.lookup(ns, name, "")
	if err != nil {
		return err
	}
	c := findContainer(t.pod, container)
	if c == nil {
		return errdefs.NotFoundf("pod %s/%s has no container %q", ns, name, container)
	}
	if t.job == nil || t.job.GetState() != pb.JobState_RUNNING {
		return errdefs.InvalidInputf("pod %s/%s is not running (Tessera job %d is %s): exec needs "+
			"a running job", ns, name, t.jobID, t.job.GetState())
	}
	entry, err := p.table.Lookup(ns)
	if err != nil {
		return err
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(entry.UID), 10))
	if err != nil {
		return fmt.Errorf("exec in pod %s/%s: user %d: %w", ns, name, entry.UID, err)
	}
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	var groups []uint32
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				groups = append(groups, uint32(n))
			}
		}
	}
	task, err := runtime.FindTask("/proc", string(t.pod.UID), t.jobID, uint64(entry.UID), container)
	if errors.Is(err, runtime.ErrNoTask) {
		return errdefs.InvalidInputf("kubectl exec is not supported for pod %s/%s here: Tessera job "+
			"%d runs on %s, and tessera-bridge can exec only into jobs on its own host",
			ns, name, t.jobID, t.job.GetNodelist())
	}
	if err != nil {
		return err
	}
	argv, dir := cmd, c.WorkingDir
	if _, rt := p.wrapped(t.pod); rt == runtime.Podman {
		argv = runtime.PodmanExec(p.Runtime, t.jobID, container, cmd, attach.Stdin() != nil, attach.TTY())
		dir = "/" // podman exec runs the command in the container's own working directory
	}
	req := runtime.ExecRequest{Task: task, UID: entry.UID, GID: uint32(gid), Groups: groups, Dir: dir, Argv: argv,
		Stdin: attach.Stdin(), TTY: attach.TTY()}
	if out := attach.Stdout(); out != nil {
		req.Stdout = out
	}
	if e := attach.Stderr(); e != nil {
		req.Stderr = e
	}
	if attach.TTY() && attach.Resize() != nil {
		sizes := make(chan runtime.Size)
		done := make(chan struct{})
		defer close(done)
		req.Resize = sizes
		go func() {
			for {
				select {
				case s, ok := <-attach.Resize():
					if !ok {
						return
					}
					select {
					case sizes <- runtime.Size{Width: s.Width, Height: s.Height}:
					case <-done:
						return
					}
				case <-done:
					return
				}
			}
		}()
	}
	code, err := runtime.Exec(ctx, req)
	if err != nil {
		return fmt.Errorf("exec in pod %s/%s (Tessera job %d): %w", ns, name, t.jobID, err)
	}
	if code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	}
	return nil
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}
