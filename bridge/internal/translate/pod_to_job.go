// Package translate turns a pod into a Tessera JobSpec and a Tessera job back into pod status.
// Pure: no I/O, no clock beyond what callers pass in.
package translate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/mapping"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
)

const (
	// ResourceGPU is the whole-GPU extended resource (NVIDIA's device plugin name).
	ResourceGPU corev1.ResourceName = "nvidia.com/gpu"
	// MigPrefix starts a MIG profile resource: nvidia.com/mig-3g.40gb.
	MigPrefix = "nvidia.com/mig-"
	// CommentPrefix starts a pod's job comment, "k8s-pod=<uid> <ns>/<name>", for people; the
	// bridge finds its jobs again by JobSpec.k8s_pod_uids, which only root can set.
	CommentPrefix = "k8s-pod="
)

// Options are the bridge-wide inputs of the translation.
type Options struct {
	Partition string         // the virtual node's partition
	Runtime   runtime.Config // how the podman runtime is run on the nodes
}

// PodToJob builds the job for a pod of a mapped namespace. Errors name the pod, the container
// and the field that cannot be run; nothing is submitted for such a pod.
func PodToJob(pod *corev1.Pod, m mapping.Entry, o Options) (*pb.JobSpec, error) {
	where := fmt.Sprintf("pod %s/%s", pod.Namespace, pod.Name)
	if err := checkPodShape(pod); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if err := checkSecurity(pod, m); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	wrapped := runtime.Wrapped(PodRuntime(m), len(pod.Spec.Containers), len(pod.Spec.InitContainers))
	c := &pod.Spec.Containers[0]
	var argv []string
	if !wrapped {
		where += fmt.Sprintf(" container %q", c.Name)
		argv = append(append([]string{}, c.Command...), c.Args...)
		if len(c.Command) == 0 {
			return nil, fmt.Errorf("%s: no command: the host runtime runs the container's command "+
				"on the node and does not read the image's entrypoint", where)
		}
	}
	res, err := PodResources(pod)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	workdir := c.WorkingDir
	if wrapped {
		workdir = "" // each container's workingDir is its own; the job's is the mapping's
	}
	if workdir == "" {
		workdir = m.Workdir
	}
	if workdir == "" {
		workdir = "/tmp"
	}
	if !strings.HasPrefix(workdir, "/") {
		return nil, fmt.Errorf("%s: workingDir %q is not an absolute path", where, workdir)
	}
	outDir := m.OutputDir
	if outDir == "" {
		outDir = workdir
	}
	spec := &pb.JobSpec{
		Name:          pod.Name,
		Argv:          argv,
		Workdir:       workdir,
		Env:           Env(pod, c),
		StdoutPattern: runtime.StdoutPattern(outDir, pod.Namespace, pod.Name),
		Partition:     o.Partition,
		Account:       m.Account,
		Qos:           m.QOS,
		TaskGroups:    []*pb.TaskGroup{{Name: "main", Count: 1, PerTask: res}},
		NodesMin:      1,
		NodesMax:      1,
		Comment:       Comment(pod),
		Uid:           m.UID,
		K8SPodUids:    []string{string(pod.UID)},
	}
	if q, ok := m.PriorityClassQOS[pod.Spec.PriorityClassName]; ok && pod.Spec.PriorityClassName != "" {
		spec.Qos = q
	}
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil {
		if *d <= 0 {
			return nil, fmt.Errorf("pod %s/%s: activeDeadlineSeconds %d is not positive",
				pod.Namespace, pod.Name, *d)
		}
		spec.TimeLimitS = *d
	}
	if wrapped {
		if err := wrappedSpec(spec, pod, m, o, workdir, outDir); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	return spec, nil
}

// checkPodShape refuses what no runtime can run.
func checkPodShape(pod *corev1.Pod) error {
	if len(pod.Spec.Containers) == 0 {
		return fmt.Errorf("has no containers")
	}
	if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		return fmt.Errorf("restartPolicy Always: a Tessera job runs to its end; " +
			"use restartPolicy Never or OnFailure")
	}
	return nil
}

// Comment is the job comment that ties a job to its pod (by UID).
func Comment(pod *corev1.Pod) string {
	return fmt.Sprintf("%s%s %s/%s", CommentPrefix, pod.UID, pod.Namespace, pod.Name)
}

// Env is the container's environment as the library resolved it (values from ConfigMaps,
// Secrets and the downward API are filled in before CreatePod), plus the pod's identity.
func Env(pod *corev1.Pod, c *corev1.Container) map[string]string {
	env := podIdentity(pod)
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

// Resources is the container's request as one task's resources: requests, else limits
// (Kubernetes defaults requests to limits); cpu rounded up to whole cores (at least 1), memory
// rounded up to MiB, nvidia.com/gpu as whole GPUs, nvidia.com/mig-<profile> as MIG instances.
func Resources(c *corev1.Container) (*pb.Resources, error) {
	get := func(name corev1.ResourceName) (resource.Quantity, bool) {
		if q, ok := c.Resources.Requests[name]; ok {
			return q, true
		}
		q, ok := c.Resources.Limits[name]
		return q, ok
	}
	r := &pb.Resources{Cpus: 1}
	if q, ok := get(corev1.ResourceCPU); ok {
		r.Cpus = uint32(max(1, math.Ceil(float64(q.MilliValue())/1000)))
	}
	if q, ok := get(corev1.ResourceMemory); ok {
		r.MemMib = uint64((q.Value() + (1<<20 - 1)) >> 20)
	}
	if q, ok := get(ResourceGPU); ok {
		r.Gpus = uint32(q.Value())
	}
	migs := migRequests(c)
	if len(migs) > 1 {
		return nil, fmt.Errorf("asks for MIG profiles %s; one profile per container",
			strings.Join(migs, ", "))
	}
	if len(migs) == 1 {
		if r.Gpus != 0 {
			return nil, fmt.Errorf("asks for both %s and %s%s; ask for one", ResourceGPU, MigPrefix, migs[0])
		}
		q, _ := get(corev1.ResourceName(MigPrefix + migs[0]))
		r.Gpus = uint32(q.Value())
		r.GpuModel = migs[0]
	}
	return r, nil
}

// migRequests lists the MIG profiles the container asks for (non-zero), sorted.
func migRequests(c *corev1.Container) []string {
	seen := map[string]bool{}
	for _, l := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
		for name, q := range l {
			if s := string(name); strings.HasPrefix(s, MigPrefix) && !q.IsZero() {
				seen[strings.TrimPrefix(s, MigPrefix)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
