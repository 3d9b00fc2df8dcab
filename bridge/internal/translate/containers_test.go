package translate

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
)

func multi(p *corev1.Pod) {
	p.Spec.InitContainers = []corev1.Container{{Name: "prep", Image: "busybox", Command: []string{"true"},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("4Gi")}}}}
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"),
		corev1.ResourceMemory: resource.MustParse("1Gi"), "nvidia.com/gpu": resource.MustParse("1")}
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "busybox",
		Command: []string{"sleep", "1"}, WorkingDir: "/scratch",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("700m"),
			corev1.ResourceMemory: resource.MustParse("512Mi"), "nvidia.com/gpu": resource.MustParse("2")}}})
}

func TestMultiContainerPodIsOneJobSizedAsKubernetesSizesAPod(t *testing.T) {
	spec, err := PodToJob(pod(multi), entry, Options{Partition: "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	r := spec.TaskGroups[0].PerTask
	// cpu: max(0.5+0.7 -> 2 cores, init 3) = 3; memory: max(1536, 4096) MiB; GPUs: 1+2.
	if r.Cpus != 3 || r.MemMib != 4096 || r.Gpus != 3 || r.GpuModel != "" {
		t.Errorf("resources %v", r)
	}
	if len(spec.Argv) != 0 || !strings.HasPrefix(spec.Script, "#!/bin/sh") {
		t.Fatalf("not the runtime's script: argv %q", spec.Argv)
	}
	for _, want := range []string{"start i0 'prep'", "take 1; start c0 'main'", "take 2; start c1 'side'",
		"cd '/scratch'", "'FROM_SECRET=s3cr3t'", "'KUBERNETES_CONTAINER_NAME=side'"} {
		if !strings.Contains(spec.Script, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	// The job's environment is the pod's identity only; secrets stay in the script.
	if spec.Env["KUBERNETES_POD_UID"] != "0b1c-uid" || spec.Env["FROM_SECRET"] != "" {
		t.Errorf("job env %v", spec.Env)
	}
	if spec.Workdir != "/home/alice" || spec.StdoutPattern != "/home/alice/k8s/k8s-team-a-train-%j.out" {
		t.Errorf("workdir %q stdout %q", spec.Workdir, spec.StdoutPattern)
	}
}

func TestPodmanNamespaceRunsTheImage(t *testing.T) {
	e := entry
	e.Runtime = runtime.Podman
	spec, err := PodToJob(pod(func(p *corev1.Pod) {
		p.Spec.Containers[0].Command = nil
		p.Spec.Containers[0].Image = "localhost/train:1"
		p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	}), e, Options{Runtime: runtime.Config{Podman: "/usr/bin/podman"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"'/usr/bin/podman'", "--pull='never'", "'localhost/train:1' 'echo hi; exit 3'",
		"--userns=keep-id"} {
		if !strings.Contains(spec.Script, want) {
			t.Errorf("script lacks %q:\n%s", want, spec.Script)
		}
	}
	if r := spec.TaskGroups[0].PerTask; r.Cpus != 1 {
		t.Errorf("a pod without requests asks for one core: %v", r)
	}
}

func TestEachContainerCarriesItsOwnExitCode(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := pod(multi)
	failed := &pb.JobInfo{JobId: 7, State: pb.JobState_FAILED, ExitCode: 3, StartTime: 1_799_999_000,
		EndTime: 1_799_999_990}
	st := PodStatusWithExits(p, failed, now, map[string]int32{"prep": 0, "main": 3, "side": 0})
	if st.Phase != corev1.PodFailed || len(st.ContainerStatuses) != 2 || len(st.InitContainerStatuses) != 1 {
		t.Fatalf("status %+v", st)
	}
	for i, want := range []struct {
		name   string
		code   int32
		reason string
	}{{"main", 3, "Error"}, {"side", 0, "Completed"}} {
		cs := st.ContainerStatuses[i]
		if cs.Name != want.name || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != want.code ||
			cs.State.Terminated.Reason != want.reason {
			t.Errorf("container %d: %+v, want %v", i, cs, want)
		}
	}
	if ic := st.InitContainerStatuses[0]; ic.Name != "prep" || ic.State.Terminated.ExitCode != 0 {
		t.Errorf("init container %+v", ic)
	}

	// An init container failed: the containers never started.
	st = PodStatusWithExits(p, &pb.JobInfo{JobId: 7, State: pb.JobState_FAILED, ExitCode: 4}, now,
		map[string]int32{"prep": 4})
	if w := st.ContainerStatuses[1].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("after a failed init container: %+v", st.ContainerStatuses[1])
	}
	if st.InitContainerStatuses[0].State.Terminated.ExitCode != 4 {
		t.Errorf("init %+v", st.InitContainerStatuses[0])
	}

	// Running: one container ended, the other runs.
	st = PodStatusWithExits(p, &pb.JobInfo{JobId: 7, State: pb.JobState_RUNNING, StartTime: 1_799_999_000}, now,
		map[string]int32{"prep": 0, "side": 0})
	if st.Phase != corev1.PodRunning || st.ContainerStatuses[0].State.Running == nil ||
		st.ContainerStatuses[1].State.Terminated == nil {
		t.Errorf("running: %+v", st.ContainerStatuses)
	}
}

func TestContainerDirMatchesTheJobsOutputFile(t *testing.T) {
	spec, err := PodToJob(pod(multi), entry, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(spec.StdoutPattern, "%j", "42")
	if got := ContainerDir(pod(multi), entry, 42); got != runtime.ContainerDir(out) {
		t.Errorf("ContainerDir %q, job output %q", got, out)
	}
	e := entry
	e.OutputDir, e.Workdir = "", ""
	spec, _ = PodToJob(pod(multi), e, Options{})
	if got := ContainerDir(pod(multi), e, 42); got != runtime.ContainerDir(strings.ReplaceAll(spec.StdoutPattern, "%j", "42")) {
		t.Errorf("without dirs: ContainerDir %q, job output %q", got, spec.StdoutPattern)
	}
}
