package provider

import (
	corev1 "k8s.io/api/core/v1"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
	"github.com/tessera-hpc/tessera/bridge/internal/translate"
)

// wrapped: the pod's job runs the runtime's script (runtime.Wrapped), which writes each
// container's log and exit code beside the job's output file.
func (p *Pods) wrapped(pod *corev1.Pod) (bool, string) {
	e, err := p.table.Lookup(pod.Namespace)
	if err != nil {
		return false, ""
	}
	rt := translate.PodRuntime(e)
	return runtime.Wrapped(rt, len(pod.Spec.Containers), len(pod.Spec.InitContainers)), rt
}

// exits reads the exit codes the containers of a wrapped pod recorded (nil for other pods and
// before the job started).
func (p *Pods) exits(pod *corev1.Pod, job *pb.JobInfo) map[string]int32 {
	e, err := p.table.Lookup(pod.Namespace)
	if w, _ := p.wrapped(pod); !w || err != nil || job.GetState() == pb.JobState_PENDING {
		return nil
	}
	return runtime.ReadExits(translate.ContainerDir(pod, e, job.GetJobId()), translate.ContainerNames(pod), e.UID)
}

// logPath is the file `kubectl logs -c container` reads: the container's own log for a wrapped
// pod, else the job's output.
func (p *Pods) logPath(pod *corev1.Pod, job *pb.JobInfo, container string) string {
	if w, _ := p.wrapped(pod); w && job.GetStdoutPath() != "" {
		if container == "" {
			container = pod.Spec.Containers[0].Name
		}
		return runtime.LogPath(runtime.ContainerDir(job.GetStdoutPath()), container)
	}
	return job.GetStdoutPath()
}
