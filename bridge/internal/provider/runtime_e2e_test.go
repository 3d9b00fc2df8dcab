package provider

// End-to-end against a real tessera-ctld (tests/bridge/test_bridge_runtime.py starts munged,
// ctld and noded, and builds a local image for the podman runtime): multi-container pods, the
// podman runtime, exec, GPU pods. Skipped unless TESSERA_BRIDGE_E2E_CTLD is set.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilexec "k8s.io/utils/exec"

	"github.com/tessera-hpc/tessera/bridge/internal/mapping"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
)

// newRuntimeE2E: team-a runs on the host, team-p through podman (TESSERA_BRIDGE_E2E_OCI_RUNTIME
// is podman's --runtime).
func newRuntimeE2E(t *testing.T) (*e2e, context.Context, *NodePods) {
	e := newE2E(t)
	user, work := os.Getenv("TESSERA_BRIDGE_E2E_USER"), os.Getenv("TESSERA_BRIDGE_E2E_WORKDIR")
	text := fmt.Sprintf("namespaces:\n  team-a:\n    user: %s\n    workdir: %s\n"+
		"  team-p:\n    user: %s\n    workdir: %s\n    runtime: podman\n", user, work, user, work)
	table, err := mapping.Parse("e2e-mapping.yaml", []byte(text), mapping.SystemUsers)
	if err != nil {
		t.Fatal(err)
	}
	e.table = table
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	n := e.startWith(ctx, runtime.Config{OCIRuntime: os.Getenv("TESSERA_BRIDGE_E2E_OCI_RUNTIME")})
	return e, ctx, n
}

// startWith is start with a runtime configuration.
func (e *e2e) startWith(ctx context.Context, cfg runtime.Config) *NodePods {
	n := e.start(ctx)
	n.Pods.Runtime = cfg
	return n
}

func logsOf(t *testing.T, ctx context.Context, n *NodePods, ns, pod, container string) string {
	t.Helper()
	rc, err := n.GetContainerLogs(ctx, ns, pod, container, api.ContainerLogOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out, _ := io.ReadAll(rc)
	return strings.TrimSpace(string(out))
}

func TestE2EMultiContainerPodRunsInitFirstAndReportsEachExitCode(t *testing.T) {
	e, ctx, n := newRuntimeE2E(t)
	p := testPod("multi", "team-a", `test -f ready || exit 9; echo "main $GREETING"`)
	p.Spec.InitContainers = []corev1.Container{{Name: "prep", Command: []string{"/bin/sh", "-c",
		`sleep 1; echo prepared > ready; echo "prep as $(id -un)"`}}}
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side",
		Command: []string{"/bin/sh", "-c", `test -f ready || exit 9; echo side; exit 5`}})
	if err := n.CreatePod(ctx, p); err != nil {
		t.Fatal(err)
	}
	got := e.waitPhase("multi", corev1.PodSucceeded, corev1.PodFailed)
	if got.Status.Phase != corev1.PodFailed {
		t.Fatalf("phase %s, want Failed (side exits 5)", got.Status.Phase)
	}
	codes := map[string]int32{}
	for _, cs := range append(got.Status.InitContainerStatuses, got.Status.ContainerStatuses...) {
		if cs.State.Terminated == nil {
			t.Fatalf("container %s not terminated: %+v", cs.Name, cs.State)
		}
		codes[cs.Name] = cs.State.Terminated.ExitCode
	}
	if fmt.Sprint(codes) != "map[main:0 prep:0 side:5]" {
		t.Errorf("exit codes %v, want prep 0, main 0, side 5", codes)
	}
	user := e.table.Namespaces["team-a"].User
	if s := logsOf(t, ctx, n, "team-a", "multi", "prep"); s != "prep as "+user {
		t.Errorf("prep logs %q", s)
	}
	if s := logsOf(t, ctx, n, "team-a", "multi", "main"); s != "main hello" {
		t.Errorf("main logs %q", s)
	}
	if s := logsOf(t, ctx, n, "team-a", "multi", "side"); s != "side" {
		t.Errorf("side logs %q", s)
	}
}

// While the job runs, an init container that has ended shows Terminated (Completed, exit 0) and
// the pod's main container Running: what kubectl prints as Running, not Init:0/1 (issue 18, seen
// with scripts/dev-cluster's example pod). The job's own view does not change meanwhile.
func TestE2EEndedInitContainerIsTerminatedWhileThePodRuns(t *testing.T) {
	e, ctx, n := newRuntimeE2E(t)
	p := testPod("initdone", "team-a", `sleep 30`)
	p.Spec.InitContainers = []corev1.Container{{Name: "prep", Command: []string{"/bin/true"}}}
	if err := n.CreatePod(ctx, p); err != nil {
		t.Fatal(err)
	}
	e.waitPhase("initdone", corev1.PodRunning)
	deadline := time.Now().Add(20 * time.Second)
	var last *corev1.Pod
	for time.Now().Before(deadline) {
		last = e.status("initdone")
		if ics := last.Status.InitContainerStatuses; len(ics) == 1 && ics[0].State.Terminated != nil {
			if term := ics[0].State.Terminated; term.ExitCode != 0 || term.Reason != "Completed" {
				t.Fatalf("init container ended %+v, want Completed with 0", term)
			}
			if last.Status.Phase != corev1.PodRunning || last.Status.ContainerStatuses[0].State.Running == nil {
				t.Fatalf("pod %s, main %+v: want Running", last.Status.Phase, last.Status.ContainerStatuses[0].State)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the init container never showed its end while the pod ran: %+v", last.Status.InitContainerStatuses)
}

func TestE2EPodmanPodRunsItsImageAsTheUserInTheJobsCgroup(t *testing.T) {
	image := os.Getenv("TESSERA_BRIDGE_E2E_IMAGE")
	if image == "" {
		t.Skip("TESSERA_BRIDGE_E2E_IMAGE not set (a local image of the user's podman)")
	}
	e, ctx, n := newRuntimeE2E(t)
	p := testPod("oci", "team-p", `echo "uid=$(id -u) $GREETING"; cat /proc/self/cgroup; ls /bin/busybox; exit 4`)
	p.Spec.Containers[0].Image = image
	p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	if err := n.CreatePod(ctx, p); err != nil {
		t.Fatal(err)
	}
	got := e.waitPhase("oci", corev1.PodSucceeded, corev1.PodFailed)
	cs := got.Status.ContainerStatuses[0]
	out := logsOf(t, ctx, n, "team-p", "oci", "main")
	if got.Status.Phase != corev1.PodFailed || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 4 {
		t.Fatalf("phase %s %+v, want Failed with exit code 4; logs:\n%s", got.Status.Phase, cs.State, out)
	}
	job := jobOf(t, got)
	uid := e.table.Namespaces["team-p"].UID
	if !strings.Contains(out, fmt.Sprintf("uid=%d hello", uid)) || !strings.Contains(out, fmt.Sprintf("/job_%d", job)) ||
		!strings.Contains(out, "/bin/busybox") {
		t.Errorf("logs %q: want the user's uid, the job's cgroup job_%d, the image's /bin/busybox", out, job)
	}
}

type attachIO struct {
	in       io.Reader
	out, err bytes.Buffer
	tty      bool
}

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error                  { return nil }
func (a *attachIO) Stdin() io.Reader            { return a.in }
func (a *attachIO) Stdout() io.WriteCloser      { return nopCloser{&a.out} }
func (a *attachIO) Stderr() io.WriteCloser      { return nopCloser{&a.err} }
func (a *attachIO) TTY() bool                   { return a.tty }
func (a *attachIO) Resize() <-chan api.TermSize { return nil }
func exitCode(err error) int {
	var ee utilexec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitStatus()
	}
	return -1
}

func TestE2EExecRunsInTheJobsCgroupAsTheUser(t *testing.T) {
	e, ctx, n := newRuntimeE2E(t)
	p := testPod("sleeper", "team-a", `echo up; sleep 60`)
	if err := n.CreatePod(ctx, p); err != nil {
		t.Fatal(err)
	}
	got := e.waitPhase("sleeper", corev1.PodRunning)
	job := jobOf(t, got)
	// The bridge learns the job runs before its process may be there: retry briefly.
	var a *attachIO
	var err error
	for i := 0; i < 50; i++ {
		a = &attachIO{in: strings.NewReader("from stdin\n")}
		err = n.RunInContainer(ctx, "team-a", "sleeper", "main",
			[]string{"/bin/sh", "-c", `read l; echo "$l uid=$(id -u) $GREETING"; cat /proc/self/cgroup; exit 6`}, a)
		if err == nil || !strings.Contains(err.Error(), "runs on") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if exitCode(err) != 6 {
		t.Fatalf("exec: %v (stdout %q stderr %q), want exit code 6", err, a.out.String(), a.err.String())
	}
	uid := e.table.Namespaces["team-a"].UID
	out := a.out.String()
	if !strings.Contains(out, fmt.Sprintf("from stdin uid=%d hello", uid)) || !strings.Contains(out, fmt.Sprintf("/job_%d\n", job)) {
		t.Errorf("exec output %q: want stdin, the user's uid, the pod's env and the job's cgroup job_%d", out, job)
	}
	tty := &attachIO{tty: true}
	if err := n.RunInContainer(ctx, "team-a", "sleeper", "main", []string{"/bin/sh", "-c", "test -t 1 && echo tty"}, tty); err != nil ||
		strings.TrimSpace(tty.out.String()) != "tty" {
		t.Errorf("exec with a tty: %v %q", err, tty.out.String())
	}
	if err := n.RunInContainer(ctx, "team-a", "sleeper", "nope", []string{"true"}, &attachIO{}); err == nil ||
		!strings.Contains(err.Error(), `no container "nope"`) {
		t.Errorf("exec into a missing container: %v", err)
	}
	if err := n.DeletePod(ctx, p); err != nil {
		t.Fatal(err)
	}
	done := testPod("done", "team-a", "exit 0")
	if err := n.CreatePod(ctx, done); err != nil {
		t.Fatal(err)
	}
	e.waitPhase("done", corev1.PodSucceeded)
	if err := n.RunInContainer(ctx, "team-a", "done", "main", []string{"true"}, &attachIO{}); err == nil ||
		!strings.Contains(err.Error(), "is not running") {
		t.Errorf("exec into an ended pod: %v", err)
	}
}

func TestE2EExecInPodmanContainer(t *testing.T) {
	image := os.Getenv("TESSERA_BRIDGE_E2E_IMAGE")
	if image == "" {
		t.Skip("TESSERA_BRIDGE_E2E_IMAGE not set")
	}
	e, ctx, n := newRuntimeE2E(t)
	p := testPod("ocisleep", "team-p", `echo inside > /tmp/marker; sleep 60`)
	p.Spec.Containers[0].Image = image
	p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	if err := n.CreatePod(ctx, p); err != nil {
		t.Fatal(err)
	}
	e.waitPhase("ocisleep", corev1.PodRunning)
	defer n.DeletePod(ctx, p)
	var a *attachIO
	var err error
	for i := 0; i < 100; i++ { // until the container is up
		a = &attachIO{}
		err = n.RunInContainer(ctx, "team-p", "ocisleep", "main", []string{"/bin/sh", "-c", "cat /tmp/marker; id -u"}, a)
		if err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	want := fmt.Sprintf("inside\n%d", e.table.Namespaces["team-p"].UID)
	if err != nil || strings.TrimSpace(a.out.String()) != want {
		t.Fatalf("podman exec: %v %q %q, want %q (the container's own /tmp)", err, a.out.String(), a.err.String(), want)
	}
}

func TestE2EGPUPodSeesItsGPUAndMIGProfileMapsToMIG(t *testing.T) {
	if os.Getenv("TESSERA_BRIDGE_E2E_GPUS") == "" {
		t.Skip("TESSERA_BRIDGE_E2E_GPUS not set (a cluster with simulated GPUs and MIG)")
	}
	e, ctx, n := newRuntimeE2E(t)
	gpu := testPod("gpu", "team-a", `echo "cvd=$CUDA_VISIBLE_DEVICES"`)
	gpu.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	mig := testPod("mig", "team-a", `echo "cvd=$CUDA_VISIBLE_DEVICES"`)
	mig.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/mig-1g.10gb": resource.MustParse("1")}
	pods := []*corev1.Pod{gpu, mig}
	want := map[string]string{"gpu": "cvd=GPU-", "mig": "cvd=MIG-"}
	if image := os.Getenv("TESSERA_BRIDGE_E2E_IMAGE"); image != "" {
		oci := testPod("ocigpu", "team-p", `echo "cvd=$CUDA_VISIBLE_DEVICES"`)
		oci.Spec.Containers[0].Image = image
		oci.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
		oci.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		pods = append(pods, oci)
		want["ocigpu"] = "cvd=GPU-"
	}
	for _, p := range pods {
		if err := n.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pods {
		name, prefix := p.Name, want[p.Name]
		got := e.waitPhase(name, corev1.PodSucceeded, corev1.PodFailed)
		out := logsOf(t, ctx, n, p.Namespace, name, "main")
		if got.Status.Phase != corev1.PodSucceeded || !strings.HasPrefix(out, prefix) || strings.Contains(out, ",") {
			t.Errorf("%s pod: %s, output %q; want one device %s...", name, got.Status.Phase, out, prefix)
		}
	}
}
