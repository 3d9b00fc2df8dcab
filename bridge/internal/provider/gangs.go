package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/log"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/podgroup"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
	"github.com/tessera-hpc/tessera/bridge/internal/translate"
)

// ReasonPodGroupWaiting is the tessera.io/JobScheduled condition's reason while a pod waits
// for the rest of its group.
const ReasonPodGroupWaiting = "PodGroupWaiting"

// gangs gathers the pods of each pod group (podgroup.Of) until minMember of them are bound to
// any of the bridge's virtual nodes, then submits one gang job whose task N runs member N
// (podgroup.GangJob). Each member's pod follows its own task. A member bound after its group's
// job was submitted runs as a job of its own. All state is guarded by Pods.mu.
type gangs struct {
	p      *Pods
	lookup podgroup.Lookup
	opts   podgroup.Options
	groups map[podgroup.Ref]*gang
	seats  map[types.UID]int // rank of each adopted member (Adopt), by pod UID
}

type gang struct {
	min      int    // minMember; 0 until known
	why      string // why the group cannot start yet, beyond missing members
	waiting  []string
	starting bool   // a submission is in flight
	jobID    uint64 // the gang job, once submitted
}

// gangMember is a tracked pod's part in its group.
type gangMember struct {
	ref       podgroup.Ref
	spec      *pb.JobSpec // the pod's own job (translate.PodToJob), its part of the gang job
	partition string
	out, exit string      // its task's output and exit status files, once the job exists
	job       *pb.JobInfo // the gang job as last read
}

// view is the job as this member's pod sees it (its own task's end once its exit file exists).
func (m *gangMember) view(j *pb.JobInfo) *pb.JobInfo {
	if m.exit == "" {
		return j
	}
	code, ok := podgroup.ReadExit(m.exit)
	return podgroup.MemberView(j, code, ok)
}

// EnableGroups makes pod groups gang jobs. Call before Adopt. lookup reads group objects
// (minMember); opts.Trun/TesseraConf reach the gang jobs.
func (p *Pods) EnableGroups(lookup podgroup.Lookup, opts podgroup.Options) {
	p.gangs = &gangs{p: p, lookup: lookup, opts: opts, groups: map[podgroup.Ref]*gang{},
		seats: map[types.UID]int{}}
}

// add takes a pod that declares a group: it waits for its group (handled), or is adopted as a
// member of a running gang job. handled is false for a pod of no group, or one bound after its
// group's job was submitted: it runs alone.
func (g *gangs) add(ctx context.Context, pod *corev1.Pod, node, partition string) (bool, error) {
	ref, ok := podgroup.Of(pod)
	if !ok {
		return false, nil
	}
	entry, err := g.p.table.Lookup(pod.Namespace)
	if err != nil {
		return true, err
	}
	if rt := translate.PodRuntime(entry); runtime.Wrapped(rt, len(pod.Spec.Containers), len(pod.Spec.InitContainers)) {
		return true, fmt.Errorf("pod %s/%s: %s: a pod group's member runs as one task of the group's gang "+
			"job, which runs one host command per pod; this pod (runtime %s, %d containers, %d init "+
			"containers) needs the container script, which gang jobs cannot run yet: give the group's "+
			"pods one container, no init containers, and a namespace of the host runtime",
			pod.Namespace, pod.Name, ref, rt, len(pod.Spec.Containers), len(pod.Spec.InitContainers))
	}
	spec, err := translate.PodToJob(pod, entry, translate.Options{Partition: partition, Runtime: g.p.Runtime})
	if err != nil {
		return true, err
	}
	k := key(pod.Namespace, pod.Name)
	t := &tracked{pod: pod.DeepCopy(), node: node,
		member: &gangMember{ref: ref, spec: spec, partition: partition}}
	p := g.p
	p.mu.Lock()
	if old, ok := p.pods[k]; ok && old.pod.UID == pod.UID { // given again: already ours
		p.mu.Unlock()
		return true, nil
	}
	if jobID, adopted := p.adopted[pod.UID]; adopted {
		_, seated := g.seats[pod.UID]
		if !seated { // its group ran it as a job of its own
			p.mu.Unlock()
			return false, nil
		}
		t.jobID = jobID
		g.seat(t)
		t.job = &pb.JobInfo{JobId: jobID, State: pb.JobState_PENDING, Reason: "Submitted"}
		t.pod.Status = *translate.PodStatus(pod, t.job, p.now())
		p.pods[k] = t
		p.mu.Unlock()
		log.G(ctx).Infof("pod %s (uid %s, %s) adopted Tessera job %d", k, pod.UID, ref, jobID)
		return true, nil
	}
	grp := g.groups[ref]
	if grp == nil {
		grp = &gang{}
		g.groups[ref] = grp
	}
	if grp.jobID != 0 {
		p.mu.Unlock()
		log.G(ctx).Infof("pod %s: %s already runs as job %d; this pod runs alone", k, ref, grp.jobID)
		return false, nil
	}
	p.pods[k] = t
	grp.waiting = append(grp.waiting, k)
	us := g.showWaiting(ref, grp, nil)
	p.mu.Unlock()
	p.send(us)
	g.maybeStart(ctx, ref)
	return true, nil
}

// seat sets a member's files once its gang job exists (with p.mu held).
func (g *gangs) seat(t *tracked) {
	t.member.out = podgroup.OutputPath(t.member.spec, t.jobID)
	t.member.exit = podgroup.ExitPath(t.member.spec, t.jobID)
}

// maybeStart submits the group's gang job once minMember pods wait.
func (g *gangs) maybeStart(ctx context.Context, ref podgroup.Ref) {
	p := g.p
	p.mu.Lock()
	grp := g.groups[ref]
	if grp == nil || grp.jobID != 0 || grp.starting || len(grp.waiting) == 0 {
		p.mu.Unlock()
		return
	}
	grp.starting = true
	need, first := grp.min, p.pods[grp.waiting[0]].pod
	p.mu.Unlock()
	var err error
	if need == 0 {
		if ref.Kind == podgroup.KindKueue {
			need, err = podgroup.KueueMinMember(first)
		} else {
			need, err = g.lookup.MinMember(ctx, ref)
		}
		if err == nil && need == 0 { // Kubernetes' basic policy: no gang
			need = 1
		}
	}
	p.mu.Lock()
	grp.starting = false
	if err != nil {
		grp.why = err.Error()
		us := g.showWaiting(ref, grp, nil)
		p.mu.Unlock()
		p.send(us)
		return
	}
	grp.min, grp.why = need, ""
	if len(grp.waiting) < need {
		us := g.showWaiting(ref, grp, nil)
		p.mu.Unlock()
		p.send(us)
		return
	}
	grp.starting = true
	members := make([]podgroup.Member, 0, len(grp.waiting))
	for _, k := range grp.waiting {
		t := p.pods[k]
		members = append(members, podgroup.Member{Pod: t.pod.DeepCopy(), Spec: t.member.spec})
	}
	p.mu.Unlock()
	podgroup.SortMembers(members)
	jobID, err := g.submit(ctx, ref, members)
	p.mu.Lock()
	grp.starting = false
	var us []update
	gone := false
	if err != nil {
		grp.why = err.Error()
		us = g.showWaiting(ref, grp, nil)
	} else {
		grp.jobID, grp.waiting = jobID, nil
		for _, m := range members {
			t := p.pods[key(m.Pod.Namespace, m.Pod.Name)]
			if t == nil || t.pod.UID != m.Pod.UID { // deleted while the job was being submitted
				gone = true
				continue
			}
			t.jobID = jobID
			g.seat(t)
			p.adopted[m.Pod.UID] = jobID
			us = p.observe(t, &pb.JobInfo{JobId: jobID, State: pb.JobState_PENDING, Reason: "Submitted"}, us)
		}
	}
	p.mu.Unlock()
	p.send(us)
	if gone { // a member's deletion ends the gang, also when it came first
		if _, err := p.api.CancelJob(ctx, &pb.CancelJobRequest{JobIds: []uint64{jobID}}); err != nil {
			log.G(ctx).Warnf("%s: cancelling gang job %d after a member was deleted: %v", ref, jobID, err)
		}
	}
}

func (g *gangs) submit(ctx context.Context, ref podgroup.Ref, ms []podgroup.Member) (uint64, error) {
	o := g.opts
	o.Partition = ms[0].Spec.GetPartition()
	spec, err := podgroup.GangJob(ref, ms, o)
	if err != nil {
		return 0, err
	}
	resp, err := g.p.api.SubmitJob(ctx, &pb.SubmitJobRequest{Spec: spec})
	if err != nil {
		return 0, fmt.Errorf("%s: tessera-ctld refused the gang job: %w", ref, err)
	}
	log.G(ctx).Infof("%s: %d pods -> Tessera gang job %d", ref, len(ms), resp.GetJobId())
	return resp.GetJobId(), nil
}

// showWaiting sets the waiting members' status (with p.mu held): Pending, the condition's
// reason PodGroupWaiting, the message saying how many pods are bound and what else is missing.
func (g *gangs) showWaiting(ref podgroup.Ref, grp *gang, us []update) []update {
	msg := fmt.Sprintf("%s: %d pods bound", ref, len(grp.waiting))
	if grp.min > 0 {
		msg += fmt.Sprintf(" of minMember %d; the gang job is submitted when all are", grp.min)
	}
	if grp.why != "" {
		msg += "; " + grp.why
	}
	for _, k := range grp.waiting {
		t := g.p.pods[k]
		j := &pb.JobInfo{State: pb.JobState_PENDING, Reason: ReasonPodGroupWaiting}
		st := translate.PodStatus(t.pod, j, g.p.now())
		st.Message = msg
		for i := range st.Conditions {
			if st.Conditions[i].Type == translate.ConditionTesseraScheduled {
				st.Conditions[i].Message = msg
			}
		}
		st.ContainerStatuses[0].State.Waiting.Message = msg
		st.ContainerStatuses[0].ContainerID = ""
		if t.pod.Status.Message == msg {
			continue
		}
		t.pod = t.pod.DeepCopy()
		t.pod.Status = *st
		if cb := g.p.notifier[t.node]; cb != nil {
			us = append(us, g.p.newUpdate(cb, t.pod.DeepCopy()))
		}
	}
	return us
}

// forget drops a deleted member (with p.mu held); a group none of whose pods remain is
// forgotten, so a new group of the same name starts afresh.
func (g *gangs) forget(k string, m *gangMember) {
	grp := g.groups[m.ref]
	if grp == nil {
		return
	}
	for i, w := range grp.waiting {
		if w == k {
			grp.waiting = append(grp.waiting[:i], grp.waiting[i+1:]...)
			break
		}
	}
	for _, t := range g.p.pods {
		if t.member != nil && t.member.ref == m.ref {
			return
		}
	}
	delete(g.groups, m.ref)
}

// run retries waiting groups (a PodGroup object created after its pods) and reports members
// whose task ended while their gang runs on (their exit files), every `period`, until ctx ends.
func (g *gangs) run(ctx context.Context, period time.Duration) {
	every(ctx, period, func() { g.tick(ctx) })
}

// tick is one round of run.
func (g *gangs) tick(ctx context.Context) {
	p := g.p
	p.mu.Lock()
	var retry []podgroup.Ref
	for ref, grp := range g.groups {
		if grp.jobID == 0 && len(grp.waiting) > 0 {
			retry = append(retry, ref)
		}
	}
	var us []update
	for _, t := range p.pods {
		if m := t.member; m != nil && m.job != nil && !t.ended && m.job.GetState() != pb.JobState_PENDING {
			us = p.observe(t, m.job, us)
		}
	}
	p.mu.Unlock()
	p.send(us)
	for _, ref := range retry {
		g.maybeStart(ctx, ref)
	}
}
