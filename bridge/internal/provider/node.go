package provider

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/log"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
)

// Taint keeps ordinary pods off the virtual nodes: only pods that tolerate it land there.
var Taint = corev1.Taint{Key: "virtual-kubelet.io/provider", Value: "tessera",
	Effect: corev1.TaintEffectNoSchedule}

// NodeStatus is one virtual node's node.NodeProvider: capacity and conditions from the partition.
type NodeStatus struct {
	pods      *Pods
	partition string
	maxPods   int64

	mu   sync.Mutex
	node *corev1.Node // our last view
	cb   func(*corev1.Node)
}

// NewNodeStatus follows a partition for the node `n` (the spec the library registers; its status
// is filled in here before registration).
func (p *Pods) NewNodeStatus(ctx context.Context, n *corev1.Node, partition string, maxPods int64) *NodeStatus {
	s := &NodeStatus{pods: p, partition: partition, maxPods: maxPods, node: n.DeepCopy()}
	s.refresh(ctx)
	n.Status = *s.node.Status.DeepCopy()
	n.Spec.Taints = []corev1.Taint{Taint}
	return s
}

// Ping: the node is alive while ctld answers.
func (s *NodeStatus) Ping(ctx context.Context) error {
	_, err := s.pods.api.Ping(ctx, &pb.PingRequest{})
	return err
}

// NotifyNodeStatus registers the library's callback.
func (s *NodeStatus) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cb = cb
}

// Run refreshes capacity and conditions every `period` until ctx ends.
func (s *NodeStatus) Run(ctx context.Context, period time.Duration) {
	every(ctx, period, func() {
		if changed := s.refresh(ctx); changed {
			s.mu.Lock()
			cb, n := s.cb, s.node.DeepCopy()
			s.mu.Unlock()
			if cb != nil {
				cb(n)
			}
		}
	})
}

// refresh reads nodes and running jobs from ctld; tells whether the status changed.
func (s *NodeStatus) refresh(ctx context.Context) bool {
	now := metav1.NewTime(s.pods.now())
	var c Capacity
	reason, msg := "TesseraReady", ""
	ready := corev1.ConditionTrue
	nodes, err := s.pods.api.ListNodes(ctx, &pb.ListNodesRequest{})
	var jobs *pb.ListJobsResponse
	if err == nil {
		jobs, err = s.pods.api.ListJobs(ctx, &pb.ListJobsRequest{States: []pb.JobState{pb.JobState_RUNNING}})
	}
	if err != nil {
		ready, reason, msg = corev1.ConditionUnknown, "TesseraUnreachable", fmt.Sprintf("tessera-ctld: %v", err)
		log.G(ctx).Warnf("node status of partition %s: %v", s.partition, err)
	} else {
		c = PartitionCapacity(s.partition, nodes.GetNodes(), jobs.GetJobs(), s.pods.jobIDs(), s.maxPods)
		msg = fmt.Sprintf("partition %s: %d usable nodes", s.partition, c.UsableNodes)
		if c.UsableNodes == 0 {
			ready, reason, msg = corev1.ConditionFalse, "TesseraNoUsableNode", c.Why
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.node.Status.DeepCopy()
	st := &s.node.Status
	if c.Capacity != nil {
		// kube-scheduler takes every bound pod's requests off allocatable, also those of pods
		// whose job Tessera still queues (or that wait for the rest of their group): they hold
		// nothing yet, so they are given back. Otherwise pods waiting in Tessera's queue would
		// fill the node in Kubernetes' view, and partly bound groups could keep the rest of
		// their members (and every other pod) unscheduled for good.
		for name, q := range s.pods.waitingRequests(s.node.Name) {
			if cur, ok := c.Allocatable[name]; ok { // only what the node offers
				cur.Add(q)
				c.Allocatable[name] = cur
			}
		}
		st.Capacity, st.Allocatable = c.Capacity, c.Allocatable
	}
	cond := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		nc := corev1.NodeCondition{Type: t, Status: status, Reason: reason, Message: msg,
			LastHeartbeatTime: now, LastTransitionTime: now}
		for _, o := range old.Conditions {
			if o.Type == t && o.Status == status {
				nc.LastTransitionTime = o.LastTransitionTime
			}
		}
		return nc
	}
	st.Conditions = []corev1.NodeCondition{
		cond(corev1.NodeReady, ready, reason, msg),
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "TesseraManagesMemory",
			"Tessera gives each job the memory it asked for"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "TesseraNoDiskPressure", "not measured by the bridge"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "TesseraNoPIDPressure", "not measured by the bridge"),
		cond(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "TesseraNetwork", "jobs use the nodes' network"),
	}
	st.Phase = corev1.NodeRunning
	return !equality.Semantic.DeepEqual(stripTimes(old), stripTimes(st))
}

func stripTimes(s *corev1.NodeStatus) *corev1.NodeStatus {
	c := s.DeepCopy()
	for i := range c.Conditions {
		c.Conditions[i].LastHeartbeatTime = metav1.Time{}
	}
	return c
}

// jobIDs are the jobs the bridge runs.
func (p *Pods) jobIDs() map[uint64]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[uint64]bool{}
	for _, id := range p.adopted {
		out[id] = true
	}
	return out
}

// waitingRequests sums the requests of the pods bound to `node` whose job holds no allocation
// in Tessera: not submitted yet (a group still gathering its members) or pending.
func (p *Pods) waitingRequests(node string) corev1.ResourceList {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := corev1.ResourceList{}
	for _, t := range p.pods {
		if t.node != node || t.ended {
			continue
		}
		if st := t.job.GetState(); t.job == nil || st == pb.JobState_PENDING {
			AddResources(out, PodRequests(t.pod))
		}
	}
	return out
}
