package podgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
)

func pod(name string, labels, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a",
		UID: types.UID("uid-" + name), Labels: labels, Annotations: annotations}}
}

func TestOfRecognizesEachKindOfGroup(t *testing.T) {
	name := "train"
	k8s := pod("a", nil, nil)
	k8s.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
	cases := []struct {
		pod  *corev1.Pod
		want Ref
	}{
		{k8s, Ref{KindKubernetes, "team-a", "train"}},
		{pod("b", nil, map[string]string{VolcanoAnnotation: "vc"}), Ref{KindVolcano, "team-a", "vc"}},
		{pod("c", nil, map[string]string{VolcanoAnnotationLegacy: "old"}), Ref{KindVolcano, "team-a", "old"}},
		// Kubeflow's training operator labels its pods for the coscheduling plugin like this.
		{pod("d", map[string]string{CoschedulingLabel: "pytorch-job",
			"training.kubeflow.org/job-name": "pytorch-job"}, nil), Ref{KindCoscheduling, "team-a", "pytorch-job"}},
		{pod("e", map[string]string{KueueGroupLabel: "kq"}, map[string]string{KueueTotalAnnotation: "3"}),
			Ref{KindKueue, "team-a", "kq"}},
	}
	for _, c := range cases {
		got, ok := Of(c.pod)
		if !ok || got != c.want {
			t.Errorf("pod %s: got %v %v, want %v", c.pod.Name, got, ok, c.want)
		}
	}
	if g, ok := Of(pod("plain", map[string]string{"app": "x"}, nil)); ok {
		t.Errorf("a pod without a group label is in %v", g)
	}
}

func TestMinMemberFromEachObjectKind(t *testing.T) {
	obj := func(spec map[string]interface{}) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"metadata": map[string]interface{}{"name": "g", "namespace": "team-a"}, "spec": spec}}
	}
	gang := obj(map[string]interface{}{"schedulingPolicy": map[string]interface{}{
		"gang": map[string]interface{}{"minCount": int64(4)}}})
	if n, err := MinMember(KindKubernetes, gang); err != nil || n != 4 {
		t.Errorf("Kubernetes gang: %d %v", n, err)
	}
	basic := obj(map[string]interface{}{"schedulingPolicy": map[string]interface{}{
		"basic": map[string]interface{}{}}})
	if n, err := MinMember(KindKubernetes, basic); err != nil || n != 0 {
		t.Errorf("Kubernetes basic policy is no gang: %d %v", n, err)
	}
	for _, k := range []Kind{KindVolcano, KindCoscheduling} {
		if n, err := MinMember(k, obj(map[string]interface{}{"minMember": int64(2)})); err != nil || n != 2 {
			t.Errorf("%s: %d %v", k, n, err)
		}
		_, err := MinMember(k, obj(map[string]interface{}{"minMember": int64(0)}))
		if err == nil || !strings.Contains(err.Error(), "spec.minMember") {
			t.Errorf("%s: minMember 0 accepted: %v", k, err)
		}
	}
	if _, err := MinMember(KindKueue, obj(nil)); err == nil {
		t.Error("a Kueue group has no object")
	}
}

func TestKueueMinMemberNeedsAPositiveTotal(t *testing.T) {
	ok := pod("a", map[string]string{KueueGroupLabel: "g"}, map[string]string{KueueTotalAnnotation: "4"})
	if n, err := KueueMinMember(ok); err != nil || n != 4 {
		t.Errorf("%d %v", n, err)
	}
	for _, a := range []map[string]string{nil, {KueueTotalAnnotation: "zero"}, {KueueTotalAnnotation: "0"}} {
		if _, err := KueueMinMember(pod("b", map[string]string{KueueGroupLabel: "g"}, a)); err == nil {
			t.Errorf("annotations %v accepted", a)
		}
	}
}

func member(name, dir string, cpus uint32, argv []string, env map[string]string) Member {
	return Member{Pod: pod(name, nil, nil), Spec: &pb.JobSpec{
		Argv: argv, Workdir: dir, Env: env, Uid: 1001, Account: "research", Partition: "debug",
		StdoutPattern: filepath.Join(dir, "k8s-team-a-"+name+"-%j.out"),
		TaskGroups:    []*pb.TaskGroup{{Name: "main", Count: 1, PerTask: &pb.Resources{Cpus: cpus, MemMib: 64}}},
		K8SPodUids:    []string{"uid-" + name}, TimeLimitS: int64(100 * cpus),
	}}
}

// The gang job's script, run by a stand-in for trun that starts the command once per rank as
// trun does on the nodes: each pod's command runs with its own environment and directory,
// writes its own output file and exit status, whatever quotes its arguments hold.
func TestGangJobRunsEachPodAsItsTask(t *testing.T) {
	dir := t.TempDir()
	wd := filepath.Join(dir, "w1")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	ms := []Member{
		member("worker-1", wd, 2, []string{"/bin/sh", "-c", `echo "$WHO in $(pwd) says 'hi'"; exit 3`},
			map[string]string{"WHO": "it's one"}),
		member("worker-0", dir, 1, []string{"/bin/echo", "zero", "$NOT_EXPANDED"}, map[string]string{"WHO": "0"}),
	}
	SortMembers(ms)
	g := Ref{KindCoscheduling, "team-a", "train"}
	spec, err := GangJob(g, ms, Options{Trun: filepath.Join(dir, "fake-trun"), TesseraConf: "/etc/t.conf"})
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.GetK8SPodUids(); len(got) != 2 || got[0] != "uid-worker-0" || got[1] != "uid-worker-1" {
		t.Errorf("pod UIDs not in rank order: %v", got)
	}
	tg := spec.GetTaskGroups()
	if len(tg) != 1 || tg[0].GetCount() != 2 || tg[0].GetPerTask().GetCpus() != 2 || spec.GetGangMin() != 0 {
		t.Errorf("tasks: %v gang_min %d", tg, spec.GetGangMin())
	}
	if spec.GetUid() != 1001 || spec.GetAccount() != "research" || spec.GetPartition() != "" ||
		spec.GetTimeLimitS() != 100 || spec.GetEnv()["TESSERA_CONF"] != "/etc/t.conf" {
		t.Errorf("identity/limits: %+v", spec)
	}
	// As trun: every rank runs, the step's status is the worst task's.
	fake := "#!/bin/sh\nrc=0\nfor r in 0 1; do SLURM_PROCID=$r \"$@\" || rc=$?; done\nexit $rc\n"
	if err := os.WriteFile(filepath.Join(dir, "fake-trun"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(script, []byte(spec.GetScript()), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	cmd.Env = []string{"SLURM_JOB_ID=77", "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("script: %v (want exit 3, rank 1's)\n%s\n%s", err, out, spec.GetScript())
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(OutputPath(ms[0].Spec, 77)); got != "zero $NOT_EXPANDED\n" {
		t.Errorf("rank 0 output %q", got)
	}
	if got := read(OutputPath(ms[1].Spec, 77)); got != "it's one in "+wd+" says 'hi'\n" {
		t.Errorf("rank 1 output %q", got)
	}
	for i, want := range []int32{0, 3} {
		if code, ok := ReadExit(ExitPath(ms[i].Spec, 77)); !ok || code != want {
			t.Errorf("rank %d exit %d %v, want %d", i, code, ok, want)
		}
	}
}

func TestGangJobRefusesMixedGPUKinds(t *testing.T) {
	a := member("a", "/tmp", 1, []string{"true"}, nil)
	b := member("b", "/tmp", 1, []string{"true"}, nil)
	a.Spec.TaskGroups[0].PerTask.Gpus, a.Spec.TaskGroups[0].PerTask.GpuModel = 1, "1g.10gb"
	b.Spec.TaskGroups[0].PerTask.Gpus, b.Spec.TaskGroups[0].PerTask.GpuModel = 1, "3g.40gb"
	if _, err := GangJob(Ref{KindVolcano, "team-a", "g"}, []Member{a, b}, Options{}); err == nil ||
		!strings.Contains(err.Error(), "different GPU kinds") {
		t.Errorf("mixed MIG profiles accepted: %v", err)
	}
}

// A member whose job is a container script (several containers, init containers, podman) has
// no one command for its task: the gang job is refused, naming the pod.
func TestGangJobRefusesAWrappedMember(t *testing.T) {
	a := member("a", "/tmp", 1, []string{"true"}, nil)
	b := member("b", "/tmp", 1, nil, nil)
	b.Spec.Script = "#!/bin/sh\nexit 0\n"
	_, err := GangJob(Ref{KindVolcano, "team-a", "g"}, []Member{a, b}, Options{})
	if err == nil || !strings.Contains(err.Error(), "pod b runs a container script") {
		t.Errorf("wrapped member accepted: %v", err)
	}
}

func TestMemberViewFollowsItsOwnTask(t *testing.T) {
	running := &pb.JobInfo{JobId: 9, State: pb.JobState_RUNNING, StartTime: 100}
	if v := MemberView(running, 0, false); v.GetState() != pb.JobState_RUNNING {
		t.Errorf("no exit file yet: %v", v.GetState())
	}
	if v := MemberView(running, 0, true); v.GetState() != pb.JobState_COMPLETED || v.GetExitCode() != 0 {
		t.Errorf("task ended 0: %v", v)
	}
	if v := MemberView(running, 3, true); v.GetState() != pb.JobState_FAILED || v.GetExitCode() != 3 {
		t.Errorf("task ended 3: %v", v)
	}
	if running.GetState() != pb.JobState_RUNNING {
		t.Error("the gang's own view changed")
	}
	cancelled := &pb.JobInfo{JobId: 9, State: pb.JobState_CANCELLED, ExitSignal: 15}
	if v := MemberView(cancelled, 0, false); v.GetState() != pb.JobState_CANCELLED {
		t.Errorf("a gang cancelled before the task ended: %v", v.GetState())
	}
}
