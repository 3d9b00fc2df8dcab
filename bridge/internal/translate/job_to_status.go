package translate

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
)

// ConditionTesseraScheduled is the pod condition that carries Tessera's pending reason.
const ConditionTesseraScheduled corev1.PodConditionType = "tessera.io/JobScheduled"

// PodStatus is the pod's status for the job's state: Pending (with Tessera's reason: Priority,
// Resources, ...) until the job starts, Running, then Succeeded (COMPLETED, exit 0) or Failed
// with the exit code (signals as 128+signal, as a kubelet reports them). `now` stamps the
// conditions' transition times.
func PodStatus(pod *corev1.Pod, job *pb.JobInfo, now time.Time) *corev1.PodStatus {
	return PodStatusWithExits(pod, job, now, nil)
}

// PodStatusWithExits is PodStatus with the exit codes each container recorded (runtime.ReadExits;
// nil for a pod whose job is its one command): every container and init container gets its own
// status (see containerStatuses).
func PodStatusWithExits(pod *corev1.Pod, job *pb.JobInfo, now time.Time, exits map[string]int32) *corev1.PodStatus {
	st := &corev1.PodStatus{Phase: corev1.PodPending, StartTime: pod.Status.StartTime}
	if st.StartTime == nil {
		t := metav1.NewTime(now)
		st.StartTime = &t
	}
	ts := func(sec int64) metav1.Time {
		if sec <= 0 {
			return metav1.NewTime(now)
		}
		return metav1.NewTime(time.Unix(sec, 0))
	}
	c := &pod.Spec.Containers[0]
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "", ContainerID: containerID(job)}
	scheduled := corev1.PodCondition{Type: ConditionTesseraScheduled, Status: corev1.ConditionTrue,
		LastTransitionTime: ts(job.GetStartTime())}
	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse,
		LastTransitionTime: metav1.NewTime(now)}
	switch job.GetState() {
	case pb.JobState_PENDING, pb.JobState_JOB_STATE_UNSPECIFIED:
		st.Phase = corev1.PodPending
		st.Reason = "TesseraPending"
		st.Message = fmt.Sprintf("Tessera job %d is pending: %s", job.GetJobId(), job.GetReason())
		scheduled.Status = corev1.ConditionFalse
		scheduled.Reason = job.GetReason()
		scheduled.Message = st.Message
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "TesseraPending", Message: st.Message}
	case pb.JobState_RUNNING, pb.JobState_COMPLETING, pb.JobState_SUSPENDED:
		st.Phase = corev1.PodRunning
		running := job.GetState() == pb.JobState_RUNNING
		cs.Ready, cs.Started = running, &running
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: ts(job.GetStartTime())}
		if running {
			ready.Status = corev1.ConditionTrue
		}
		st.Message = fmt.Sprintf("Tessera job %d %s on %s", job.GetJobId(), job.GetState(), job.GetNodelist())
	default:
		code := ExitCode(job)
		st.Phase = corev1.PodFailed
		if job.GetState() == pb.JobState_COMPLETED && code == 0 {
			st.Phase = corev1.PodSucceeded
		}
		st.Reason = job.GetState().String()
		st.Message = fmt.Sprintf("Tessera job %d ended %s (exit code %d)", job.GetJobId(), job.GetState(), code)
		started := false
		cs.Started = &started
		cs.State.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: code, Signal: job.GetExitSignal(), Reason: job.GetState().String(),
			Message: st.Message, StartedAt: ts(job.GetStartTime()), FinishedAt: ts(job.GetEndTime()),
			ContainerID: cs.ContainerID,
		}
	}
	st.ContainerStatuses, st.InitContainerStatuses = containerStatuses(pod, cs, exits)
	st.Conditions = conditions(st, scheduled, ready)
	return st
}

// conditions: scheduled by Kubernetes (always, the pod is bound), by Tessera, ready.
func conditions(st *corev1.PodStatus, tessera, ready corev1.PodCondition) []corev1.PodCondition {
	return []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: *st.StartTime},
		tessera, ready,
		{Type: corev1.ContainersReady, Status: ready.Status, LastTransitionTime: ready.LastTransitionTime},
	}
}

// ExitCode is the container exit code for an ended job: the script's status, 128+signal when a
// signal ended it, 1 when a failed job reports neither (e.g. NODE_FAIL, cancelled while pending).
func ExitCode(job *pb.JobInfo) int32 {
	if s := job.GetExitSignal(); s != 0 {
		return 128 + s
	}
	if c := job.GetExitCode(); c != 0 {
		return c
	}
	if job.GetState() == pb.JobState_COMPLETED {
		return 0
	}
	return 1
}

func containerID(job *pb.JobInfo) string {
	return fmt.Sprintf("tessera://%d", job.GetJobId())
}
