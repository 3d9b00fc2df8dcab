package translate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/mapping"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
)

// PodRuntime is the namespace's runtime (host when the mapping names none).
func PodRuntime(m mapping.Entry) string {
	if m.Runtime == "" {
		return runtime.Host
	}
	return m.Runtime
}

// PodResources is the pod's request as one task's, as Kubernetes sizes a pod: the sum over its
// containers, and at least each init container's (they run one at a time, before); cpu summed
// in millicores, then rounded up to cores (at least 1). One MIG profile per pod, and no mix of
// whole GPUs and MIG instances.
func PodResources(pod *corev1.Pod) (*pb.Resources, error) {
	sum := &pb.Resources{}
	var milli, initMilli int64
	add := func(cs []corev1.Container, init bool) error {
		for i := range cs {
			r, err := containerResources(&cs[i])
			if err != nil {
				return err
			}
			m := cpuMilli(&cs[i])
			if init {
				initMilli = max(initMilli, m)
			} else {
				milli += m
			}
			if err := addInto(sum, r, init); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(pod.Spec.Containers, false); err != nil {
		return nil, err
	}
	if err := add(pod.Spec.InitContainers, true); err != nil {
		return nil, err
	}
	sum.Cpus = uint32(max(1, (max(milli, initMilli)+999)/1000))
	return sum, nil
}

func containerResources(c *corev1.Container) (*pb.Resources, error) {
	r, err := Resources(c)
	if err != nil {
		return nil, fmt.Errorf("container %q: %w", c.Name, err)
	}
	return r, nil
}

// cpuMilli is the container's cpu request (else limit) in millicores, 0 when it names none.
func cpuMilli(c *corev1.Container) int64 {
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		return q.MilliValue()
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		return q.MilliValue()
	}
	return 0
}

// addInto adds r's memory and GPUs to sum (or keeps the larger, for an init container).
func addInto(sum, r *pb.Resources, maxOnly bool) error {
	if r.Gpus > 0 && sum.Gpus > 0 && r.GpuModel != sum.GpuModel {
		what := func(m string) string {
			if m == "" {
				return string(ResourceGPU)
			}
			return MigPrefix + m
		}
		return fmt.Errorf("containers ask for %s and %s; a pod asks for one kind of GPU",
			what(sum.GpuModel), what(r.GpuModel))
	}
	if r.Gpus > 0 {
		sum.GpuModel = r.GpuModel
	}
	if maxOnly {
		sum.MemMib, sum.Gpus = max(sum.MemMib, r.MemMib), max(sum.Gpus, r.Gpus)
	} else {
		sum.MemMib, sum.Gpus = sum.MemMib+r.MemMib, sum.Gpus+r.Gpus
	}
	return nil
}

// checkSecurity: the pod runs as the namespace's user, never as another uid, never privileged.
func checkSecurity(pod *corev1.Pod, m mapping.Entry) error {
	if sc := pod.Spec.SecurityContext; sc != nil && sc.RunAsUser != nil && *sc.RunAsUser != int64(m.UID) {
		return fmt.Errorf("securityContext.runAsUser %d: the namespace's pods run as %s (uid %d) only",
			*sc.RunAsUser, m.User, m.UID)
	}
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		sc := c.SecurityContext
		if sc == nil {
			continue
		}
		if sc.RunAsUser != nil && *sc.RunAsUser != int64(m.UID) {
			return fmt.Errorf("container %q: securityContext.runAsUser %d: the namespace's pods run "+
				"as %s (uid %d) only", c.Name, *sc.RunAsUser, m.User, m.UID)
		}
		if sc.Privileged != nil && *sc.Privileged {
			return fmt.Errorf("container %q: privileged containers are not run", c.Name)
		}
	}
	return nil
}

// wrappedSpec fills the job of a pod that runs through the runtime's script (runtime.Wrapped):
// the script, the pod's identity as the job's environment (exec finds the job's processes by
// it), each container's own environment in the script.
func wrappedSpec(spec *pb.JobSpec, pod *corev1.Pod, m mapping.Entry, o Options, workdir, outDir string) error {
	rp := runtime.Pod{Namespace: pod.Namespace, Name: pod.Name, Runtime: PodRuntime(m),
		Workdir: workdir, OutDir: outDir}
	for i := range pod.Spec.InitContainers {
		c, err := runtimeContainer(pod, &pod.Spec.InitContainers[i])
		if err != nil {
			return err
		}
		rp.Init = append(rp.Init, c)
	}
	for i := range pod.Spec.Containers {
		c, err := runtimeContainer(pod, &pod.Spec.Containers[i])
		if err != nil {
			return err
		}
		rp.Main = append(rp.Main, c)
	}
	script, err := runtime.Script(rp, o.Runtime)
	if err != nil {
		return err
	}
	spec.Script, spec.Argv = script, nil
	spec.Env = podIdentity(pod)
	return nil
}

func runtimeContainer(pod *corev1.Pod, c *corev1.Container) (runtime.Container, error) {
	r, err := containerResources(c)
	if err != nil {
		return runtime.Container{}, err
	}
	if c.WorkingDir != "" && !strings.HasPrefix(c.WorkingDir, "/") {
		return runtime.Container{}, fmt.Errorf("container %q: workingDir %q is not an absolute path",
			c.Name, c.WorkingDir)
	}
	env := Env(pod, c)
	env["KUBERNETES_CONTAINER_NAME"] = c.Name
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	out := runtime.Container{Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args,
		WorkingDir: c.WorkingDir, GPUs: r.Gpus, Pull: pullPolicy(c.ImagePullPolicy)}
	for _, k := range names {
		out.Env = append(out.Env, runtime.EnvVar{Name: k, Value: env[k]})
	}
	return out, nil
}

func pullPolicy(p corev1.PullPolicy) string {
	switch p {
	case corev1.PullAlways:
		return "always"
	case corev1.PullNever:
		return "never"
	}
	return "missing"
}

func podIdentity(pod *corev1.Pod) map[string]string {
	return map[string]string{
		"KUBERNETES_POD_NAME":      pod.Name,
		"KUBERNETES_POD_NAMESPACE": pod.Namespace,
		"KUBERNETES_POD_UID":       string(pod.UID),
	}
}

// ContainerNames lists the pod's init containers then its containers.
func ContainerNames(pod *corev1.Pod) []string {
	var out []string
	for _, c := range pod.Spec.InitContainers {
		out = append(out, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		out = append(out, c.Name)
	}
	return out
}

// containerStatuses gives each container the job's state (cs), except: a container that recorded
// its exit code is Terminated with it ("Completed" for 0, else "Error"); while the job runs, an
// init container without a code is Running and one with a code is Terminated; once the job ended,
// a container without a code after an init container failed is Waiting "PodInitializing" (it
// never started), and containers without a code otherwise keep the job's ending.
func containerStatuses(pod *corev1.Pod, cs corev1.ContainerStatus, exits map[string]int32) (
	[]corev1.ContainerStatus, []corev1.ContainerStatus) {
	initFailed := false
	for _, c := range pod.Spec.InitContainers {
		if code, ok := exits[c.Name]; ok && code != 0 {
			initFailed = true
		}
	}
	one := func(c *corev1.Container, init bool) corev1.ContainerStatus {
		s := *cs.DeepCopy()
		s.Name, s.Image = c.Name, c.Image
		code, ok := exits[c.Name]
		switch {
		case ok && (cs.State.Running != nil || cs.State.Terminated != nil):
			reason := "Completed"
			if code != 0 {
				reason = "Error"
			}
			t := &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason,
				ContainerID: s.ContainerID}
			if cs.State.Terminated != nil {
				t.StartedAt, t.FinishedAt = cs.State.Terminated.StartedAt, cs.State.Terminated.FinishedAt
				if code > 128 {
					t.Signal = code - 128
				}
			} else if cs.State.Running != nil {
				t.StartedAt = cs.State.Running.StartedAt
			}
			s.State = corev1.ContainerState{Terminated: t}
			f := false
			s.Ready, s.Started = false, &f
		case cs.State.Terminated != nil && !init && initFailed:
			s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
			s.Ready = false
		}
		return s
	}
	var main, inits []corev1.ContainerStatus
	for i := range pod.Spec.Containers {
		main = append(main, one(&pod.Spec.Containers[i], false))
	}
	for i := range pod.Spec.InitContainers {
		inits = append(inits, one(&pod.Spec.InitContainers[i], true))
	}
	return main, inits
}

// ContainerDir is where the job `jobID` of a wrapped pod leaves its containers' logs and exit
// codes (runtime.ContainerDir of its output file; ListJobs does not carry the resolved path).
func ContainerDir(pod *corev1.Pod, m mapping.Entry, jobID uint64) string {
	out := m.OutputDir
	if out == "" {
		out = m.Workdir // the job's working directory, as PodToJob chooses it for a wrapped pod
	}
	if out == "" {
		out = "/tmp"
	}
	path := strings.ReplaceAll(runtime.StdoutPattern(out, pod.Namespace, pod.Name), "%j",
		strconv.FormatUint(jobID, 10))
	return runtime.ContainerDir(path)
}
