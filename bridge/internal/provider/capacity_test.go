package provider

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

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
