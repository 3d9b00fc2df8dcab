package provider

// Pod groups, WatchJobs events and the pod-UID field against a real tessera-ctld (started by
// tests/bridge/test_bridge_ctld.py, which also gives trun and the cluster's configuration).

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/podgroup"
)

// fixedGroups answers minMember from a table (what the apiserver's PodGroup objects would say).
type fixedGroups map[string]int

func (f fixedGroups) MinMember(_ context.Context, g podgroup.Ref) (int, error) {
	if n, ok := f[g.Name]; ok {
		return n, nil
	}
	return 0, fmt.Errorf("%s not found", g)
}

// Eventf records Kubernetes events by pod name (the provider's Recorder).
func (e *e2e) Eventf(obj runtime.Object, _, reason, format string, args ...interface{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	name := obj.(*corev1.Pod).Name
	e.events[name] = append(e.events[name], reason+": "+fmt.Sprintf(format, args...))
}

func (e *e2e) status(name string) *corev1.Pod {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen[name]
}

func groupPod(name, group, script string) *corev1.Pod {
	p := testPod(name, "team-a", script)
	p.Labels = map[string]string{podgroup.CoschedulingLabel: group}
	return p
}

// hold submits a plain job (not the bridge's) that holds `cpus` CPUs, and waits until it runs.
func (e *e2e) hold(ctx context.Context, cpus uint32) uint64 {
	spec := &pb.JobSpec{Name: "blocker", Argv: []string{"/bin/sleep", "120"}, Workdir: "/tmp",
		Partition: "debug", Uid: e.table.Namespaces["team-a"].UID,
		TaskGroups: []*pb.TaskGroup{{Name: "main", Count: 1, PerTask: &pb.Resources{Cpus: cpus}}}}
	r, err := e.api.SubmitJob(ctx, &pb.SubmitJobRequest{Spec: spec})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		e.api.CancelJob(context.Background(), &pb.CancelJobRequest{JobIds: []uint64{r.GetJobId()}})
	})
	e.waitJob(ctx, r.GetJobId(), pb.JobState_RUNNING)
	return r.GetJobId()
}

func (e *e2e) waitJob(ctx context.Context, id uint64, want pb.JobState) *pb.JobInfo {
	var j *pb.JobInfo
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if j, err = e.api.GetJob(ctx, &pb.GetJobRequest{JobId: id}); err == nil && j.GetState() == want {
			return j
		}
	}
	e.t.Fatalf("job %d never %v: %v %v", id, want, j.GetState(), err)
	return nil
}

func (e *e2e) jobsNamed(ctx context.Context, name string) []*pb.JobInfo {
	resp, err := e.api.ListJobs(ctx, &pb.ListJobsRequest{IncludeFinished: true})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*pb.JobInfo
	for _, j := range resp.GetJobs() {
		if j.GetSpec().GetName() == name {
			out = append(out, j)
		}
	}
	return out
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// A group of 4 split across two virtual nodes: nothing is submitted while 3 are bound; the one
// gang job does not start while only 3 CPUs are free; then all 4 start at once, and each pod
// ends with its own task's exit code and output.
func TestE2EPodGroupStartsTogether(t *testing.T) {
	e := newE2E(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := e.start(ctx)
	b := a.Pods.Node("tessera-debug-b", "debug")
	b.NotifyPods(ctx, e.notify)
	e.groups["train"] = 4
	blocker := e.hold(ctx, 1) // 3 of the partition's 4 CPUs stay free
	script := `echo "pod $KUBERNETES_POD_NAME rank $SLURM_PROCID"; sleep 2; [ "$KUBERNETES_POD_NAME" = w3 ] && exit 3; exit 0`
	for i, n := range []*NodePods{a, a, b} {
		if err := n.CreatePod(ctx, groupPod(fmt.Sprintf("w%d", i), "train", script)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		p := e.status(fmt.Sprintf("w%d", i))
		c := condition(p, "tessera.io/JobScheduled")
		if p.Status.Phase != corev1.PodPending || c == nil || c.Reason != ReasonPodGroupWaiting ||
			!strings.Contains(c.Message, "3 pods bound of minMember 4") {
			t.Fatalf("w%d while 3 of 4 are bound: %+v", i, p.Status)
		}
	}
	if js := e.jobsNamed(ctx, "podgroup-train"); len(js) != 0 {
		t.Fatalf("a job was submitted for an incomplete group: %v", js)
	}
	if err := b.CreatePod(ctx, groupPod("w3", "train", script)); err != nil {
		t.Fatal(err)
	}
	js := e.jobsNamed(ctx, "podgroup-train")
	if len(js) != 1 {
		t.Fatalf("%d gang jobs for the complete group, want 1", len(js))
	}
	gang := js[0]
	uids := gang.GetSpec().GetK8SPodUids()
	for i := 0; i < 4; i++ {
		if len(uids) != 4 || !strings.HasPrefix(uids[i], fmt.Sprintf("uid-w%d-", i)) {
			t.Errorf("gang job's pod UIDs %v, want w0..w3 in rank order", uids)
			break
		}
	}
	// Only 3 CPUs are free: the gang waits whole, with Tessera's reason on every pod.
	time.Sleep(3 * time.Second)
	for i := 0; i < 4; i++ {
		p := e.status(fmt.Sprintf("w%d", i))
		c := condition(p, "tessera.io/JobScheduled")
		if p.Status.Phase != corev1.PodPending || c == nil || (c.Reason != "Resources" && c.Reason != "Priority") {
			t.Fatalf("w%d while only 3 CPUs are free: %+v", i, p.Status)
		}
	}
	if _, err := e.api.CancelJob(ctx, &pb.CancelJobRequest{JobIds: []uint64{blocker}}); err != nil {
		t.Fatal(err)
	}
	var started []int64
	for i := 0; i < 4; i++ {
		p := e.waitPhase(fmt.Sprintf("w%d", i), corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed)
		if jobOf(t, p) != gang.GetJobId() {
			t.Errorf("w%d runs in job %d, want the gang's %d", i, jobOf(t, p), gang.GetJobId())
		}
		if cs := p.Status.ContainerStatuses[0]; cs.State.Running != nil {
			started = append(started, cs.State.Running.StartedAt.Unix())
		}
	}
	for _, s := range started {
		if s != started[0] {
			t.Errorf("members started at different times: %v", started)
		}
	}
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("w%d", i)
		p := e.waitPhase(name, corev1.PodSucceeded, corev1.PodFailed)
		want, phase := int32(0), corev1.PodSucceeded
		if i == 3 {
			want, phase = 3, corev1.PodFailed
		}
		if p.Status.Phase != phase || p.Status.ContainerStatuses[0].State.Terminated.ExitCode != want {
			t.Errorf("%s: %v exit %d, want %v %d", name, p.Status.Phase,
				p.Status.ContainerStatuses[0].State.Terminated.ExitCode, phase, want)
		}
		rc, err := a.GetContainerLogs(ctx, "team-a", name, "main", api.ContainerLogOpts{})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(rc)
		if got := strings.TrimSpace(string(out)); got != fmt.Sprintf("pod %s rank %d", name, i) {
			t.Errorf("%s logs %q", name, got)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if ev := strings.Join(e.events["w2"], "\n"); !strings.Contains(ev, "TesseraStarted") {
		t.Errorf("w2 events: %q", ev)
	}
}

// Deleting one member of a running gang ends the gang: its job is cancelled, the other pod ends.
func TestE2EPodGroupMemberDeletionEndsTheGang(t *testing.T) {
	e := newE2E(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := e.start(ctx)
	e.groups["pair"] = 2
	p0, p1 := groupPod("p0", "pair", "sleep 300"), groupPod("p1", "pair", "sleep 300")
	for _, p := range []*corev1.Pod{p0, p1} {
		if err := n.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	jid := jobOf(t, e.waitPhase("p0", corev1.PodRunning))
	e.waitPhase("p1", corev1.PodRunning)
	if err := n.DeletePod(ctx, p0); err != nil {
		t.Fatal(err)
	}
	e.waitJob(ctx, jid, pb.JobState_CANCELLED)
	if p := e.waitPhase("p1", corev1.PodFailed, corev1.PodSucceeded); p.Status.Phase != corev1.PodFailed {
		t.Errorf("the other member after the gang ended: %+v", p.Status)
	}
}

// A restarted bridge adopts a running gang job by its pods' UIDs (a Kueue-labelled group here):
// no second job, each pod still follows its task.
func TestE2EPodGroupRestartAdopts(t *testing.T) {
	e := newE2E(t)
	ctx1, stop1 := context.WithCancel(context.Background())
	n := e.start(ctx1)
	var ms []*corev1.Pod
	for i := 0; i < 2; i++ {
		p := testPod(fmt.Sprintf("k%d", i), "team-a", "sleep 5; echo done $KUBERNETES_POD_NAME")
		p.Labels = map[string]string{podgroup.KueueGroupLabel: "kq"}
		p.Annotations = map[string]string{podgroup.KueueTotalAnnotation: "2"}
		ms = append(ms, p)
		if err := n.CreatePod(ctx1, p); err != nil {
			t.Fatal(err)
		}
	}
	jid := jobOf(t, e.waitPhase("k0", corev1.PodRunning))
	stop1()

	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	n2 := e.start(ctx2)
	for _, p := range ms {
		if err := n2.CreatePod(ctx2, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range ms {
		got := e.waitPhase(p.Name, corev1.PodSucceeded, corev1.PodFailed)
		if got.Status.Phase != corev1.PodSucceeded || jobOf(t, got) != jid {
			t.Errorf("%s after restart: job %d (was %d) %+v", p.Name, jobOf(t, got), jid, got.Status)
		}
	}
	if js := e.jobsNamed(ctx2, "podgroup-kq"); len(js) != 1 {
		t.Errorf("%d jobs for group kq after a bridge restart, want 1", len(js))
	}
}

// A requeue is an event on the pod, which goes back to Pending and then runs again; its job
// was found through the WatchJobs stream.
func TestE2ERequeueIsAPodEvent(t *testing.T) {
	e := newE2E(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := e.start(ctx)
	if err := n.CreatePod(ctx, testPod("requeued", "team-a", "sleep 300")); err != nil {
		t.Fatal(err)
	}
	jid := jobOf(t, e.waitPhase("requeued", corev1.PodRunning))
	if _, err := e.api.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: jid, Action: pb.UpdateJobRequest_REQUEUE}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		e.mu.Lock()
		ev := strings.Join(e.events["requeued"], "\n")
		e.mu.Unlock()
		if strings.Contains(ev, "Requeued: Tessera job") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Requeued event on the pod: %q", ev)
		}
	}
	e.waitPhase("requeued", corev1.PodRunning)
	if err := n.DeletePod(ctx, testPod("requeued", "team-a", "")); err != nil {
		t.Fatal(err)
	}
}

// The WatchJobs stream breaks when tessera-ctld restarts: the bridge reconnects and the pod
// still ends Succeeded. test_bridge_ctld.py restarts ctld once this test writes the marker
// file TESSERA_BRIDGE_E2E_RESTART_MARKER (the pod runs by then).
func TestE2ESurvivesCtldRestart(t *testing.T) {
	marker := os.Getenv("TESSERA_BRIDGE_E2E_RESTART_MARKER")
	if marker == "" {
		t.Skip("TESSERA_BRIDGE_E2E_RESTART_MARKER not set (test_bridge_ctld.py restarts ctld)")
	}
	e := newE2E(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := e.start(ctx)
	if err := n.CreatePod(ctx, testPod("through", "team-a", "sleep 10; echo through")); err != nil {
		t.Fatal(err)
	}
	jid := jobOf(t, e.waitPhase("through", corev1.PodRunning))
	if err := os.WriteFile(marker, []byte("running\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := e.waitPhase("through", corev1.PodSucceeded, corev1.PodFailed)
	if p.Status.Phase != corev1.PodSucceeded || jobOf(t, p) != jid {
		t.Fatalf("after ctld restarted: job %d (was %d) %+v", jobOf(t, p), jid, p.Status)
	}
}
