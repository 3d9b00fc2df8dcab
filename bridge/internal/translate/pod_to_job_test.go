package translate

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/mapping"
)

var entry = mapping.Entry{User: "alice", UID: 1001, Account: "research", Workdir: "/home/alice",
	OutputDir: "/home/alice/k8s", QOS: "normal", PriorityClassQOS: map[string]string{"urgent": "high"}}

func pod(mod func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "team-a", UID: "0b1c-uid"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox", Command: []string{"/bin/sh", "-c"}, Args: []string{"echo hi; exit 3"},
				Env: []corev1.EnvVar{{Name: "FOO", Value: "bar"}, {Name: "FROM_SECRET", Value: "s3cr3t"}},
			}},
		},
	}
	if mod != nil {
		mod(p)
	}
	return p
}

func resources(req corev1.ResourceList) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests = req }
}

func TestCommandArgsEnvAndIdentity(t *testing.T) {
	spec, err := PodToJob(pod(nil), entry, Options{Partition: "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(spec.Argv, "|"); got != "/bin/sh|-c|echo hi; exit 3" {
		t.Errorf("argv = %q", got)
	}
	if spec.Env["FOO"] != "bar" || spec.Env["FROM_SECRET"] != "s3cr3t" || spec.Env["KUBERNETES_POD_UID"] != "0b1c-uid" {
		t.Errorf("env = %v", spec.Env)
	}
	if spec.Uid != 1001 || spec.Account != "research" || spec.Partition != "gpu" || spec.Qos != "normal" {
		t.Errorf("identity: uid %d account %q partition %q qos %q", spec.Uid, spec.Account, spec.Partition, spec.Qos)
	}
	if spec.Workdir != "/home/alice" || spec.StdoutPattern != "/home/alice/k8s/k8s-team-a-train-%j.out" {
		t.Errorf("workdir %q stdout %q", spec.Workdir, spec.StdoutPattern)
	}
	if len(spec.K8SPodUids) != 1 || spec.K8SPodUids[0] != "0b1c-uid" {
		t.Errorf("k8s_pod_uids %q does not carry the pod UID", spec.K8SPodUids)
	}
	if spec.TimeLimitS != 0 {
		t.Errorf("time limit %d without activeDeadlineSeconds", spec.TimeLimitS)
	}
	tg := spec.TaskGroups
	if len(tg) != 1 || tg[0].Count != 1 || tg[0].PerTask.Cpus != 1 || spec.NodesMax != 1 {
		t.Errorf("task groups %v", tg)
	}
}

func TestWorkingDirAndPriorityClass(t *testing.T) {
	spec, err := PodToJob(pod(func(p *corev1.Pod) {
		p.Spec.Containers[0].WorkingDir = "/scratch"
		p.Spec.PriorityClassName = "urgent"
	}), entry, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Workdir != "/scratch" || spec.Qos != "high" {
		t.Errorf("workdir %q qos %q", spec.Workdir, spec.Qos)
	}
}

func TestActiveDeadlineIsTimeLimit(t *testing.T) {
	d := int64(90)
	spec, err := PodToJob(pod(func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = &d }), entry, Options{})
	if err != nil || spec.TimeLimitS != 90 {
		t.Fatalf("time limit %v, err %v", spec.GetTimeLimitS(), err)
	}
	zero := int64(0)
	if _, err := PodToJob(pod(func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = &zero }), entry, Options{}); err == nil ||
		!strings.Contains(err.Error(), "activeDeadlineSeconds") {
		t.Errorf("activeDeadlineSeconds 0 accepted: %v", err)
	}
}

func TestResources(t *testing.T) {
	cases := []struct {
		name string
		req  corev1.ResourceList
		want *pb.Resources
	}{
		{"cpu rounds up, memory in MiB", corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1536Mi")},
			&pb.Resources{Cpus: 2, MemMib: 1536}},
		{"memory rounds up to MiB", corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1G")},
			&pb.Resources{Cpus: 1, MemMib: 954}},
		{"small cpu is one core", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			&pb.Resources{Cpus: 1}},
		{"whole GPUs", corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")},
			&pb.Resources{Cpus: 1, Gpus: 2}},
		{"MIG profile", corev1.ResourceList{"nvidia.com/mig-3g.40gb": resource.MustParse("1")},
			&pb.Resources{Cpus: 1, Gpus: 1, GpuModel: "3g.40gb"}},
	}
	for _, c := range cases {
		spec, err := PodToJob(pod(resources(c.req)), entry, Options{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := spec.TaskGroups[0].PerTask
		if got.Cpus != c.want.Cpus || got.MemMib != c.want.MemMib || got.Gpus != c.want.Gpus ||
			got.GpuModel != c.want.GpuModel {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLimitsStandInForRequests(t *testing.T) {
	spec, err := PodToJob(pod(func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"),
			corev1.ResourceCPU: resource.MustParse("4")}
	}), entry, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := spec.TaskGroups[0].PerTask; r.Gpus != 1 || r.Cpus != 4 {
		t.Errorf("limits not used: %v", r)
	}
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name, want string
		mod        func(*corev1.Pod)
	}{
		{"gpu and mig", "ask for one", resources(corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"),
			"nvidia.com/mig-1g.10gb": resource.MustParse("1")})},
		{"two mig profiles", "one profile per container", resources(corev1.ResourceList{
			"nvidia.com/mig-1g.10gb": resource.MustParse("1"), "nvidia.com/mig-3g.40gb": resource.MustParse("1")})},
		{"no command", "no command", func(p *corev1.Pod) { p.Spec.Containers[0].Command = nil }},
		{"no containers", "has no containers", func(p *corev1.Pod) { p.Spec.Containers = nil }},
		{"init container without command", `init container "prep": no command`, func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "prep", Image: "busybox"}}
		}},
		{"another uid", "runAsUser 0: the namespace's pods run as alice (uid 1001) only", func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: new(int64)}
		}},
		{"privileged", `container "main": privileged`, func(p *corev1.Pod) {
			yes := true
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
		}},
		{"gpu kinds across containers", "a pod asks for one kind of GPU", func(p *corev1.Pod) {
			side := p.Spec.Containers[0]
			side.Name = "side"
			side.Resources.Requests = corev1.ResourceList{"nvidia.com/mig-1g.10gb": resource.MustParse("1")}
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
			p.Spec.Containers = append(p.Spec.Containers, side)
		}},
		{"restart always", "restartPolicy Always", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyAlways }},
		{"relative workdir", "not an absolute path", func(p *corev1.Pod) { p.Spec.Containers[0].WorkingDir = "data" }},
	}
	for _, c := range cases {
		_, err := PodToJob(pod(c.mod), entry, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "team-a/train") {
			t.Errorf("%s: err = %v, want one naming the pod and %q", c.name, err, c.want)
		}
	}
}

func TestNamespaceMappingRefusesUnmapped(t *testing.T) {
	lookup := func(name string) (uint32, error) {
		if name == "alice" {
			return 1001, nil
		}
		return 0, &mappingErr{name}
	}
	table, err := mapping.Parse("/etc/tessera/bridge-mapping.yaml",
		[]byte("namespaces:\n  team-a:\n    user: alice\n    account: research\n"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := table.Lookup("team-a"); err != nil || e.UID != 1001 || e.Account != "research" {
		t.Errorf("team-a: %v %v", e, err)
	}
	_, err = table.Lookup("default")
	if err == nil || !strings.Contains(err.Error(), `namespace "default" is not mapped`) ||
		!strings.Contains(err.Error(), "/etc/tessera/bridge-mapping.yaml") {
		t.Errorf("unmapped namespace: %v", err)
	}
	for _, bad := range []struct{ text, want string }{
		{"namespaces:\n  x:\n    account: a\n", "no user"},
		{"namespaces:\n  x:\n    user: mallory\n", `user "mallory"`},
		{"namespaces:\n  x:\n    user: root\n", "root"},
		{"namespaces:\n  x:\n    user: alice\n    workdir: rel\n", "not an absolute path"},
		{"namespaces:\n  x:\n    user: alice\n    uid: 0\n", "unknown field"},
		{"namespaces:\n  x:\n    user: alice\n    runtime: docker\n", `runtime "docker" is not one of "host", "podman"`},
	} {
		lk := lookup
		if bad.want == "root" {
			lk = func(string) (uint32, error) { return 0, nil }
		}
		if _, err := mapping.Parse("m.yaml", []byte(bad.text), lk); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err %v, want %q", bad.text, err, bad.want)
		}
	}
}

type mappingErr struct{ name string }

func (e *mappingErr) Error() string { return "unknown user " + e.name }

func TestJobStateToPodStatus(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := pod(nil)
	cases := []struct {
		job   *pb.JobInfo
		phase corev1.PodPhase
		code  int32
	}{
		{&pb.JobInfo{JobId: 7, State: pb.JobState_PENDING, Reason: "Resources"}, corev1.PodPending, -1},
		{&pb.JobInfo{JobId: 7, State: pb.JobState_RUNNING, StartTime: 1_799_999_990}, corev1.PodRunning, -1},
		{&pb.JobInfo{JobId: 7, State: pb.JobState_COMPLETED}, corev1.PodSucceeded, 0},
		{&pb.JobInfo{JobId: 7, State: pb.JobState_FAILED, ExitCode: 3}, corev1.PodFailed, 3},
		{&pb.JobInfo{JobId: 7, State: pb.JobState_CANCELLED, ExitSignal: 9}, corev1.PodFailed, 137},
		{&pb.JobInfo{JobId: 7, State: pb.JobState_NODE_FAIL}, corev1.PodFailed, 1},
	}
	for _, c := range cases {
		st := PodStatus(p, c.job, now)
		if st.Phase != c.phase {
			t.Errorf("%v: phase %s, want %s", c.job.State, st.Phase, c.phase)
		}
		term := st.ContainerStatuses[0].State.Terminated
		if c.code >= 0 && (term == nil || term.ExitCode != c.code) {
			t.Errorf("%v: terminated %v, want exit code %d", c.job.State, term, c.code)
		}
	}
	pending := PodStatus(p, cases[0].job, now)
	var found bool
	for _, cond := range pending.Conditions {
		if cond.Type == ConditionTesseraScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == "Resources" {
			found = true
		}
	}
	if !found || !strings.Contains(pending.Message, "Resources") {
		t.Errorf("pending pod does not carry Tessera's reason: %v", pending)
	}
}
