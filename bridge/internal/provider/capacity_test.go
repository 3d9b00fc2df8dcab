package provider

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
)

func TestPartitionCapacity(t *testing.T) {
	nodes := []*pb.NodeInfo{
		{Name: "tn1", State: pb.NodeState_NODE_IDLE, Partitions: []string{"cpu"}, Cpus: 4, RealMemoryMib: 4096},
		{Name: "tn3", State: pb.NodeState_NODE_MIXED, Partitions: []string{"cpu", "gpu"}, Cpus: 8, RealMemoryMib: 16384,
			Gpus: []*pb.GpuDevice{{Index: 0, Healthy: true}, {Index: 1, Healthy: true, MigEnabled: true,
				MigInstances: []*pb.MigInstance{{Profile: "3g.40gb", Uuid: "MIG-a"}, {Profile: "3g.40gb", Uuid: "MIG-b"}}}}},
		{Name: "tn4", State: pb.NodeState_NODE_DOWN, Partitions: []string{"gpu"}, Cpus: 8, RealMemoryMib: 16384},
	}
	running := []*pb.JobInfo{
		{JobId: 10, Alloc: []*pb.NodeAllocation{{Node: "tn3", Cpus: 2, MemMib: 1024, GpuIndices: []uint32{0}}}},
		{JobId: 11, Alloc: []*pb.NodeAllocation{{Node: "tn3", Cpus: 1, MigUuids: []string{"MIG-a"}}}},
		{JobId: 12, Alloc: []*pb.NodeAllocation{{Node: "tn3", Cpus: 4}}}, // the bridge's: stays allocatable
	}
	c := PartitionCapacity("gpu", nodes, running, map[uint64]bool{12: true}, 100)
	q := func(l corev1.ResourceList, name corev1.ResourceName) int64 { v := l[name]; return v.Value() }
	if c.UsableNodes != 1 {
		t.Fatalf("usable nodes %d (tn4 is down)", c.UsableNodes)
	}
	if q(c.Capacity, "cpu") != 8 || q(c.Capacity, "memory") != 16384<<20 || q(c.Capacity, "nvidia.com/gpu") != 1 ||
		q(c.Capacity, "nvidia.com/mig-3g.40gb") != 2 || q(c.Capacity, "pods") != 100 {
		t.Errorf("capacity %v", c.Capacity)
	}
	if q(c.Allocatable, "cpu") != 5 || q(c.Allocatable, "memory") != 15360<<20 ||
		q(c.Allocatable, "nvidia.com/gpu") != 0 || q(c.Allocatable, "nvidia.com/mig-3g.40gb") != 1 {
		t.Errorf("allocatable %v", c.Allocatable)
	}
	none := PartitionCapacity("gpu", nodes[2:], nil, nil, 100)
	if none.UsableNodes != 0 || none.Why != "partition gpu has no usable node (tn4 DOWN)" {
		t.Errorf("no usable node: %+v", none)
	}
}

// Pods that hold nothing in Tessera yet (a group gathering its members, a job Tessera queues)
// are given back to the node's allocatable: kube-scheduler counts every bound pod, and waiting
// pods must not keep the rest of their group (and every other pod) from being bound (issue 18:
// 1,000 pods in groups of 10 on 100 CPUs stopped at partly bound groups).
func TestWaitingPodsRequestsAreGivenBack(t *testing.T) {
	pod := func(cpu, initCPU string) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Mi")}}},
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("500m")}}}}}}
		if initCPU != "" {
			p.Spec.InitContainers = []corev1.Container{{Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(initCPU)}}}}
		}
		return p
	}
	r := PodRequests(pod("1", "4"))
	if cpu := r[corev1.ResourceCPU]; cpu.MilliValue() != 4000 {
		t.Errorf("an init container's larger request wins: cpu %s", cpu.String())
	}
	p := NewPods(nil, nil)
	p.pods = map[string]*tracked{
		"ns/gathering": {pod: pod("1", ""), node: "tessera-cpu"}, // no job yet
		"ns/queued":    {pod: pod("2", ""), node: "tessera-cpu", jobID: 7, job: &pb.JobInfo{State: pb.JobState_PENDING}},
		"ns/running":   {pod: pod("3", ""), node: "tessera-cpu", jobID: 8, job: &pb.JobInfo{State: pb.JobState_RUNNING}},
		"ns/ended":     {pod: pod("5", ""), node: "tessera-cpu", jobID: 9, ended: true},
		"ns/other":     {pod: pod("6", ""), node: "tessera-gpu"},
	}
	w := p.waitingRequests("tessera-cpu")
	if cpu, mem := w[corev1.ResourceCPU], w[corev1.ResourceMemory]; cpu.MilliValue() != 4000 || mem.Value() != 32<<20 {
		t.Errorf("waiting requests %v, want cpu 4 (1.5 + 2.5) and 32Mi", w)
	}
}

// Updates of one pod made in one order and sent by two goroutines in the other: the older is
// dropped, so the last status the library gets is the newest (issue 18: a gang of /bin/true pods
// left a pod Running for good when its start's update was sent after its end's).
func TestSendDropsAnUpdateOlderThanOneSent(t *testing.T) {
	p := NewPods(nil, nil)
	var got []corev1.PodPhase
	cb := func(pod *corev1.Pod) { got = append(got, pod.Status.Phase) }
	mk := func(phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g0-9"},
			Status: corev1.PodStatus{Phase: phase}}
	}
	p.mu.Lock()
	running := p.newUpdate(cb, mk(corev1.PodRunning))
	succeeded := p.newUpdate(cb, mk(corev1.PodSucceeded))
	other := p.newUpdate(cb, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g0-8"},
		Status: corev1.PodStatus{Phase: corev1.PodPending}})
	p.mu.Unlock()
	p.send([]update{succeeded})
	p.send([]update{running, other})
	if len(got) != 2 || got[0] != corev1.PodSucceeded || got[1] != corev1.PodPending {
		t.Errorf("sent %v, want [Succeeded Pending] (the stale Running dropped)", got)
	}
}
