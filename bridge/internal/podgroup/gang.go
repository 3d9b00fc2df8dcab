package podgroup

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
)

// Member is one pod of a complete group with the job translate.PodToJob made for it alone.
type Member struct {
	Pod  *corev1.Pod
	Spec *pb.JobSpec
}

// Options are the bridge-wide inputs of a gang job.
type Options struct {
	Trun        string // trun on the Tessera nodes (absolute path, or a name in the job's PATH)
	TesseraConf string // exported to the job as TESSERA_CONF when set (trun reads it)
	Partition   string // the partition of the virtual node the first member is bound to
}

// SortMembers puts members in rank order: by pod name (stable across bridge restarts).
func SortMembers(ms []Member) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Pod.Name < ms[j].Pod.Name })
}

// GangJob is one job for a whole group: one task per member, all started together (gang_min =
// every task), on as many nodes as they need. The batch script runs `trun` once; task `rank`
// runs member `rank`'s command with its environment and working directory, writing its output
// to OutputPath(member, job) and its exit status to ExitPath(member, job), so each pod follows
// its own task. Every task gets the largest request of any member (Tessera places one task
// shape per task group; a group's pods are normally alike). Members must share the namespace's
// user, account and QoS (they do: one namespace) and, when they ask for MIG, the profile.
func GangJob(g Ref, ms []Member, o Options) (*pb.JobSpec, error) {
	if len(ms) == 0 {
		return nil, fmt.Errorf("%s: no members", g)
	}
	first := ms[0].Spec
	per := proto.Clone(first.GetTaskGroups()[0].GetPerTask()).(*pb.Resources)
	uids := make([]string, 0, len(ms))
	var b strings.Builder
	b.WriteString("case \"$SLURM_PROCID\" in\n")
	for rank, m := range ms {
		s := m.Spec
		if s.GetScript() != "" || len(s.GetArgv()) == 0 {
			return nil, fmt.Errorf("%s: pod %s runs a container script (several containers, init "+
				"containers or the podman runtime); a gang's task runs one host command", g, m.Pod.Name)
		}
		r := s.GetTaskGroups()[0].GetPerTask()
		if r.GetGpuModel() != per.GetGpuModel() && r.GetGpus() > 0 && per.GetGpus() > 0 {
			return nil, fmt.Errorf("%s: pods %s and %s ask for different GPU kinds (%q, %q); "+
				"a gang's tasks share one", g, ms[0].Pod.Name, m.Pod.Name, per.GetGpuModel(), r.GetGpuModel())
		}
		if per.GetGpus() == 0 {
			per.GpuModel = r.GetGpuModel()
		}
		per.Cpus = max(per.GetCpus(), r.GetCpus())
		per.MemMib = max(per.GetMemMib(), r.GetMemMib())
		per.Gpus = max(per.GetGpus(), r.GetGpus())
		if s.GetUid() != first.GetUid() || s.GetAccount() != first.GetAccount() {
			return nil, fmt.Errorf("%s: pods %s and %s map to different users or accounts",
				g, ms[0].Pod.Name, m.Pod.Name)
		}
		uids = append(uids, string(m.Pod.UID))
		fmt.Fprintf(&b, "%d) o=%s\"$SLURM_JOB_ID\"\n   ( cd %s && exec env --", rank,
			quote(stem(s.GetStdoutPattern())), quote(s.GetWorkdir()))
		keys := make([]string, 0, len(s.GetEnv()))
		for k := range s.GetEnv() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString(" " + quote(k+"="+s.GetEnv()[k]))
		}
		for _, a := range s.GetArgv() {
			b.WriteString(" " + quote(a))
		}
		b.WriteString(" ) >\"$o.out\" 2>&1 ;;\n")
	}
	b.WriteString("*) echo \"tessera-bridge: no pod for task $SLURM_PROCID\" >&2; exit 1 ;;\nesac\n")
	b.WriteString("rc=$?\necho \"$rc\" >\"$o.exit.tmp\" && mv -f \"$o.exit.tmp\" \"$o.exit\"\nexit \"$rc\"\n")
	trun := o.Trun
	if trun == "" {
		trun = "trun"
	}
	script := fmt.Sprintf("#!/bin/sh\n# tessera-bridge: %s, %d pods, task N runs pod N\nexec %s /bin/sh -c %s\n",
		g, len(ms), quote(trun), quote(b.String()))
	env := map[string]string{"TESSERA_K8S_POD_GROUP": g.Namespace + "/" + g.Name}
	if o.TesseraConf != "" {
		env["TESSERA_CONF"] = o.TesseraConf
	}
	spec := &pb.JobSpec{
		Name:          "podgroup-" + g.Name,
		Script:        script,
		Workdir:       first.GetWorkdir(),
		Env:           env,
		StdoutPattern: fmt.Sprintf("%s/k8s-%s-podgroup-%s-%%j.out", dir(first.GetStdoutPattern()), g.Namespace, g.Name),
		Partition:     o.Partition,
		Account:       first.GetAccount(),
		Qos:           first.GetQos(),
		TaskGroups:    []*pb.TaskGroup{{Name: "pods", Count: uint32(len(ms)), PerTask: per}},
		Comment:       fmt.Sprintf("k8s-pod-group %s/%s (%s), %d pods", g.Namespace, g.Name, g.Kind, len(ms)),
		Uid:           first.GetUid(),
		K8SPodUids:    uids,
	}
	for _, m := range ms { // the shortest deadline of any member bounds the gang
		if l := m.Spec.GetTimeLimitS(); l > 0 && (spec.TimeLimitS == 0 || l < spec.TimeLimitS) {
			spec.TimeLimitS = l
		}
	}
	return spec, nil
}

// stem is a member's output pattern without "%j.out": the script appends the job id.
func stem(pattern string) string {
	return strings.TrimSuffix(strings.TrimSuffix(pattern, ".out"), "%j")
}

func dir(pattern string) string {
	if i := strings.LastIndexByte(pattern, '/'); i > 0 {
		return pattern[:i]
	}
	return "/tmp"
}

// OutputPath is where a member's task writes its output in job `jobID`.
func OutputPath(member *pb.JobSpec, jobID uint64) string {
	return stem(member.GetStdoutPattern()) + strconv.FormatUint(jobID, 10) + ".out"
}

// ExitPath is where a member's task writes its exit status when it ends.
func ExitPath(member *pb.JobSpec, jobID uint64) string {
	return stem(member.GetStdoutPattern()) + strconv.FormatUint(jobID, 10) + ".exit"
}

// ReadExit reads a member's exit status; ok is false while the task has not ended.
func ReadExit(path string) (code int32, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// MemberView is the job as one member's pod sees it: the gang's state until the member's own
// task ends, then COMPLETED (exit 0) or FAILED with its exit status (a shell reports a signal
// as 128+N, kept as the exit code). A gang that ended before the task reported (cancelled,
// a member deleted, a node failure) ends every pod without a status with the gang's state.
func MemberView(job *pb.JobInfo, exit int32, exited bool) *pb.JobInfo {
	if !exited {
		return job
	}
	v := proto.Clone(job).(*pb.JobInfo)
	v.ExitSignal = 0
	v.ExitCode = exit
	v.State = pb.JobState_COMPLETED
	if exit != 0 {
		v.State = pb.JobState_FAILED
	}
	return v
}

// quote makes s one word of a POSIX shell command line.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
