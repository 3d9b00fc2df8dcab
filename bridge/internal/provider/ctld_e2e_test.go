package provider

// End-to-end against a real tessera-ctld (munged, ctld, noded started by
// tests/bridge/test_bridge_ctld.py): the provider's pod lifecycle through the public gRPC API,
// without Kubernetes. Skipped unless TESSERA_BRIDGE_E2E_CTLD is set.

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tessera-hpc/tessera/bridge/internal/ctld"
	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/mapping"
	"github.com/tessera-hpc/tessera/bridge/internal/munge"
	"github.com/tessera-hpc/tessera/bridge/internal/podgroup"
)

type e2e struct {
	t     *testing.T
	api   pb.ControllerClient
	table *mapping.Table
	mu    sync.Mutex
	seen  map[string]*corev1.Pod // last status notified, by pod name
	// Pod groups: minMember by group name (gangs_e2e_test.go); events recorded, by pod name.
	groups fixedGroups
	events map[string][]string
}

func newE2E(t *testing.T) *e2e {
	addr := os.Getenv("TESSERA_BRIDGE_E2E_CTLD")
	if addr == "" {
		t.Skip("TESSERA_BRIDGE_E2E_CTLD not set (tests/bridge/test_bridge_ctld.py sets it)")
	}
	api, conn, err := ctld.Dial(ctld.Options{Addr: addr,
		Encoder: munge.Command{Socket: os.Getenv("TESSERA_BRIDGE_E2E_MUNGE")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	text := "namespaces:\n  team-a:\n    user: " + os.Getenv("TESSERA_BRIDGE_E2E_USER") +
		"\n    workdir: " + os.Getenv("TESSERA_BRIDGE_E2E_WORKDIR") + "\n"
	table, err := mapping.Parse("e2e-mapping.yaml", []byte(text), mapping.SystemUsers)
	if err != nil {
		t.Fatal(err)
	}
	return &e2e{t: t, api: api, table: table, seen: map[string]*corev1.Pod{}, groups: fixedGroups{},
		events: map[string][]string{}}
}

// start runs a bridge core (as after a process start) and returns the debug partition's node.
func (e *e2e) start(ctx context.Context) *NodePods {
	pods := NewPods(e.api, e.table)
	pods.EnableGroups(e.groups, podgroup.Options{Trun: os.Getenv("TESSERA_BRIDGE_E2E_TRUN"),
		TesseraConf: os.Getenv("TESSERA_BRIDGE_E2E_CONF")})
	pods.SetRecorder(e)
	if _, err := pods.Adopt(ctx); err != nil {
		e.t.Fatal(err)
	}
	n := pods.Node("tessera-debug", "debug")
	n.NotifyPods(ctx, e.notify)
	go pods.Follow(ctx, 2*time.Second)
	return n
}

func (e *e2e) notify(p *corev1.Pod) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen[p.Name] = p
}

func testPod(name, ns, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name + "-" + time.Now().Format("150405.000"))},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
			Name: "main", Command: []string{"/bin/sh", "-c", script},
			Env:       []corev1.EnvVar{{Name: "GREETING", Value: "hello"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}}},
	}
}

func (e *e2e) waitPhase(name string, phases ...corev1.PodPhase) *corev1.Pod {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		p := e.seen[name]
		e.mu.Unlock()
		if p != nil {
			for _, ph := range phases {
				if p.Status.Phase == ph {
					return p
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("pod %s never reached %v (last: %v)", name, phases, e.seen[name])
	return nil
}

func jobOf(t *testing.T, p *corev1.Pod) uint64 {
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "tessera://")
	var n uint64
	for _, c := range id {
		if c < '0' || c > '9' {
			t.Fatalf("container ID %q", p.Status.ContainerStatuses[0].ContainerID)
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}

func TestE2EPodLifecycleAgainstCtld(t *testing.T) {
	e := newE2E(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := e.start(ctx)

	ok := testPod("ok", "team-a", `echo "$GREETING from $KUBERNETES_POD_NAME as $(id -un)"; exit 0`)
	if err := n.CreatePod(ctx, ok); err != nil {
		t.Fatal(err)
	}
	p := e.waitPhase("ok", corev1.PodSucceeded, corev1.PodFailed)
	if p.Status.Phase != corev1.PodSucceeded || p.Status.ContainerStatuses[0].State.Terminated.ExitCode != 0 {
		t.Fatalf("ok: %+v", p.Status)
	}
	rc, err := n.GetContainerLogs(ctx, "team-a", "ok", "main", api.ContainerLogOpts{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(rc)
	want := "hello from ok as " + e.table.Namespaces["team-a"].User
	if strings.TrimSpace(string(out)) != want {
		t.Errorf("logs %q, want %q", out, want)
	}

	bad := testPod("bad", "team-a", "echo failing; exit 3")
	if err := n.CreatePod(ctx, bad); err != nil {
		t.Fatal(err)
	}
	p = e.waitPhase("bad", corev1.PodSucceeded, corev1.PodFailed)
	if p.Status.Phase != corev1.PodFailed || p.Status.ContainerStatuses[0].State.Terminated.ExitCode != 3 {
		t.Fatalf("bad: %+v", p.Status)
	}

	if err := n.CreatePod(ctx, testPod("intruder", "team-x", "id")); err == nil ||
		!strings.Contains(err.Error(), `namespace "team-x" is not mapped`) {
		t.Errorf("unmapped namespace: %v", err)
	}

	sleeper := testPod("sleeper", "team-a", "sleep 300")
	if err := n.CreatePod(ctx, sleeper); err != nil {
		t.Fatal(err)
	}
	p = e.waitPhase("sleeper", corev1.PodRunning)
	jid := jobOf(t, p)
	if err := n.DeletePod(ctx, sleeper); err != nil {
		t.Fatal(err)
	}
	// The cancel reaches the node asynchronously: the job ends CANCELLED shortly after.
	var job *pb.JobInfo
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if job, err = e.api.GetJob(ctx, &pb.GetJobRequest{JobId: jid}); err == nil && job.GetState() == pb.JobState_CANCELLED {
			break
		}
	}
	if job.GetState() != pb.JobState_CANCELLED {
		t.Errorf("job %d after pod deletion: %v %v", jid, job.GetState(), err)
	}
	if p := e.waitPhase("sleeper", corev1.PodFailed, corev1.PodSucceeded); p.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Errorf("deleted pod not reported terminated: %+v", p.Status)
	}
}

func TestE2EBridgeRestartAdoptsJobs(t *testing.T) {
	e := newE2E(t)
	ctx1, stop1 := context.WithCancel(context.Background())
	n := e.start(ctx1)
	survivor := testPod("survivor", "team-a", "sleep 4; echo survived")
	if err := n.CreatePod(ctx1, survivor); err != nil {
		t.Fatal(err)
	}
	jid := jobOf(t, e.waitPhase("survivor", corev1.PodRunning))
	stop1() // the bridge process ends

	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	n2 := e.start(ctx2) // a new process: adopts from ctld
	if err := n2.CreatePod(ctx2, survivor); err != nil {
		t.Fatal(err)
	}
	p := e.waitPhase("survivor", corev1.PodSucceeded, corev1.PodFailed)
	if p.Status.Phase != corev1.PodSucceeded || jobOf(t, p) != jid {
		t.Fatalf("after restart: job %d (was %d), %+v", jobOf(t, p), jid, p.Status)
	}
	resp, err := e.api.ListJobs(ctx2, &pb.ListJobsRequest{IncludeFinished: true})
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, j := range resp.GetJobs() {
		if j.GetSpec().GetName() == "survivor" {
			count++
		}
	}
	if count != 1 {
		t.Errorf("%d jobs for pod survivor after a bridge restart, want 1", count)
	}
}

func TestE2ENodeCapacityFollowsTessera(t *testing.T) {
	e := newE2E(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pods := NewPods(e.api, e.table)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "tessera-debug"}}
	ns := pods.NewNodeStatus(ctx, node, "debug", 100)
	cpu := node.Status.Capacity[corev1.ResourceCPU]
	alloc := node.Status.Allocatable[corev1.ResourceCPU]
	if cpu.Value() != 4 || alloc.Value() != 4 {
		t.Fatalf("capacity %v allocatable %v, want 4 CPUs (two nodes of 2)", node.Status.Capacity, node.Status.Allocatable)
	}
	var ready *corev1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &node.Status.Conditions[i]
		}
	}
	if ready == nil || ready.Status != corev1.ConditionTrue || len(node.Spec.Taints) != 1 {
		t.Fatalf("conditions %v taints %v", node.Status.Conditions, node.Spec.Taints)
	}
	if err := ns.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// A job that is not the bridge's takes 2 CPUs: allocatable drops, capacity does not.
	spec := &pb.JobSpec{Name: "plain", Argv: []string{"/bin/sleep", "30"}, Workdir: "/tmp",
		Partition: "debug", Uid: e.table.Namespaces["team-a"].UID,
		TaskGroups: []*pb.TaskGroup{{Name: "main", Count: 1, PerTask: &pb.Resources{Cpus: 2}}}}
	r, err := e.api.SubmitJob(ctx, &pb.SubmitJobRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	defer e.api.CancelJob(context.Background(), &pb.CancelJobRequest{JobIds: []uint64{r.GetJobId()}})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ns.refresh(ctx)
		ns.mu.Lock()
		a := ns.node.Status.Allocatable[corev1.ResourceCPU]
		c := ns.node.Status.Capacity[corev1.ResourceCPU]
		ns.mu.Unlock()
		if a.Value() == 2 && c.Value() == 4 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("allocatable did not drop to 2 CPUs while a plain job runs: %v", ns.node.Status.Allocatable)
}

func TestE2EPendingPodCarriesTesseraReason(t *testing.T) {
	e := newE2E(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := e.start(ctx)
	// A plain Tessera job takes every CPU of the partition (two nodes of 2 CPUs).
	spec := &pb.JobSpec{Name: "hog", Argv: []string{"/bin/sleep", "60"}, Workdir: "/tmp",
		Partition: "debug", Uid: e.table.Namespaces["team-a"].UID, NodesMin: 2, NodesMax: 2,
		TaskGroups: []*pb.TaskGroup{{Name: "main", Count: 2, TasksPerNode: 1, PerTask: &pb.Resources{Cpus: 2}}}}
	r, err := e.api.SubmitJob(ctx, &pb.SubmitJobRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	hog := r.GetJobId()
	defer e.api.CancelJob(context.Background(), &pb.CancelJobRequest{JobIds: []uint64{hog}})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		j, err := e.api.GetJob(ctx, &pb.GetJobRequest{JobId: hog})
		if err == nil && j.GetState() == pb.JobState_RUNNING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d never ran: %v %v", hog, j.GetState(), err)
		}
	}
	if err := n.CreatePod(ctx, testPod("waiter", "team-a", "echo ran")); err != nil {
		t.Fatal(err)
	}
	var reason string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && reason == ""; time.Sleep(100 * time.Millisecond) {
		e.mu.Lock()
		if p := e.seen["waiter"]; p != nil && p.Status.Phase == corev1.PodPending {
			for _, c := range p.Status.Conditions {
				if c.Type == "tessera.io/JobScheduled" && c.Status == corev1.ConditionFalse && c.Reason != "" {
					reason = c.Reason
				}
			}
		}
		e.mu.Unlock()
	}
	if reason != "Resources" && reason != "Priority" {
		t.Fatalf("pending pod's Tessera reason %q (last status %+v)", reason, e.seen["waiter"])
	}
	// Once the CPUs are free the pod runs to the end.
	if _, err := e.api.CancelJob(ctx, &pb.CancelJobRequest{JobIds: []uint64{hog}}); err != nil {
		t.Fatal(err)
	}
	if p := e.waitPhase("waiter", corev1.PodSucceeded, corev1.PodFailed); p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("waiter: %+v", p.Status)
	}
}
