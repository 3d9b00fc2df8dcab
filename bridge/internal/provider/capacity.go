package provider

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/translate"
)

// Capacity is what a partition offers Kubernetes: capacity counts every usable node of the
// partition; allocatable takes off what Tessera has given to jobs that are not the bridge's
// (the Kubernetes scheduler takes off its own pods' requests itself).
type Capacity struct {
	Capacity, Allocatable corev1.ResourceList
	UsableNodes           int    // nodes neither down nor drained nor unregistered
	Why                   string // when UsableNodes is 0: why
}

func usable(s pb.NodeState) bool {
	switch s {
	case pb.NodeState_NODE_IDLE, pb.NodeState_NODE_MIXED, pb.NodeState_NODE_ALLOCATED:
		return true
	}
	return false
}

// counts is one side (capacity or allocatable) while summing.
type counts struct {
	cpus    int64
	memMiB  int64
	gpus    int64
	migs    map[string]int64
	gpuSeen bool
}

func (c *counts) list(pods int64) corev1.ResourceList {
	l := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(max(c.cpus, 0), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(max(c.memMiB, 0)<<20, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
	if c.gpuSeen {
		l[translate.ResourceGPU] = *resource.NewQuantity(max(c.gpus, 0), resource.DecimalSI)
	}
	for p, n := range c.migs {
		l[corev1.ResourceName(translate.MigPrefix+p)] = *resource.NewQuantity(max(n, 0), resource.DecimalSI)
	}
	return l
}

// PartitionCapacity sums the partition's usable nodes. bridgeJobs are the jobs the bridge runs
// (their allocations stay in allocatable); running lists the running jobs with allocations.
func PartitionCapacity(partition string, nodes []*pb.NodeInfo, running []*pb.JobInfo,
	bridgeJobs map[uint64]bool, maxPods int64) Capacity {
	capc, inPart, why := sumNodes(partition, nodes)
	free := capc
	free.migs = map[string]int64{}
	for p, v := range capc.migs {
		free.migs[p] = v
	}
	for _, j := range running {
		if !bridgeJobs[j.GetJobId()] {
			free.subtract(j, inPart)
		}
	}
	c := Capacity{Capacity: capc.list(maxPods), Allocatable: free.list(maxPods), UsableNodes: len(inPart)}
	if len(inPart) == 0 {
		sort.Strings(why)
		c.Why = fmt.Sprintf("partition %s has no usable node", partition)
		if len(why) > 0 {
			c.Why += " (" + strings.Join(why, ", ") + ")"
		}
	}
	return c
}

// sumNodes adds up the partition's usable nodes; why lists the others with their states.
func sumNodes(partition string, nodes []*pb.NodeInfo) (counts, map[string]*pb.NodeInfo, []string) {
	capc := counts{migs: map[string]int64{}}
	inPart := map[string]*pb.NodeInfo{}
	var why []string
	for _, n := range nodes {
		if !contains(n.GetPartitions(), partition) {
			continue
		}
		if !usable(n.GetState()) {
			why = append(why, fmt.Sprintf("%s %s", n.GetName(), strings.TrimPrefix(n.GetState().String(), "NODE_")))
			continue
		}
		inPart[n.GetName()] = n
		capc.cpus += int64(n.GetCpus())
		capc.memMiB += int64(n.GetRealMemoryMib())
		for _, g := range n.GetGpus() {
			if !g.GetHealthy() {
				continue
			}
			capc.gpuSeen = true
			if !g.GetMigEnabled() {
				capc.gpus++
				continue
			}
			for _, m := range g.GetMigInstances() {
				capc.migs[m.GetProfile()]++
			}
		}
	}
	return capc, inPart, why
}

// subtract takes off what a job holds on the partition's nodes.
func (c *counts) subtract(j *pb.JobInfo, inPart map[string]*pb.NodeInfo) {
	for _, a := range j.GetAlloc() {
		n, ok := inPart[a.GetNode()]
		if !ok {
			continue
		}
		c.cpus -= int64(a.GetCpus())
		c.memMiB -= int64(a.GetMemMib())
		c.gpus -= int64(len(a.GetGpuIndices()))
		for _, uuid := range a.GetMigUuids() {
			if p := migProfile(n, uuid); p != "" {
				c.migs[p]--
			}
		}
	}
}

func migProfile(n *pb.NodeInfo, uuid string) string {
	for _, g := range n.GetGpus() {
		for _, m := range g.GetMigInstances() {
			if m.GetUuid() == uuid {
				return m.GetProfile()
			}
		}
	}
	return ""
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// PodRequests is what kube-scheduler counts a pod for on its node: per resource, the sum of its
// containers' requests, at least each init container's, plus its overhead.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		AddResources(out, c.Resources.Requests)
	}
	for _, c := range pod.Spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	AddResources(out, pod.Spec.Overhead)
	return out
}

// AddResources adds `more` into `into`.
func AddResources(into, more corev1.ResourceList) {
	for name, q := range more {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}
