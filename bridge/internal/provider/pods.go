// Package provider is the virtual kubelet's provider: pods bound to a partition's virtual node
// become Tessera jobs (PodLifecycleHandler), and the node's capacity and conditions come from
// the partition's nodes (NodeProvider).
//
// One Pods serves every virtual node of the process; Node(name, partition) gives each node's
// view (its pods only, its partition for new jobs).
package provider

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/log"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
	"github.com/tessera-hpc/tessera/bridge/internal/mapping"
	"github.com/tessera-hpc/tessera/bridge/internal/runtime"
	"github.com/tessera-hpc/tessera/bridge/internal/translate"
)

// tracked is one pod the bridge runs, and its job.
type tracked struct {
	pod   *corev1.Pod // as last given by the pod controller, status ours
	node  string
	jobID uint64
	job   *pb.JobInfo      // last seen (a gang member's view of it); nil before the first listing
	exits map[string]int32 // the exit codes its containers recorded (wrapped pods), last seen
	ended bool             // deleted from Kubernetes, or its job ended
	// A pod group's member (gangs.go): jobID is 0 until the group's gang job is submitted.
	member *gangMember
}

// Pods runs pods as jobs through ctld's public API.
type Pods struct {
	api   pb.ControllerClient
	table *mapping.Table
	now   func() time.Time
	// Runtime is how the podman runtime runs on the nodes (set before the nodes run).
	Runtime runtime.Config

	mu       sync.Mutex
	pods     map[string]*tracked          // "ns/name"
	adopted  map[types.UID]uint64         // pod UID -> job, from ctld (restart safety)
	notifier map[string]func(*corev1.Pod) // node name -> the library's status callback
	gangs    *gangs                       // pod groups (EnableGroups); nil = every pod alone
	events   Recorder                     // Kubernetes events on pods (SetRecorder); may be nil
	seq      uint64                       // the last update made (newUpdate)

	sendMu sync.Mutex        // held while updates are sent (send); never while taking mu
	sent   map[string]uint64 // "ns/name" -> the last update sent
}

// NewPods makes the pod side of the bridge. Call Adopt before the nodes run.
func NewPods(api pb.ControllerClient, table *mapping.Table) *Pods {
	return &Pods{api: api, table: table, now: time.Now, pods: map[string]*tracked{},
		adopted: map[types.UID]uint64{}, notifier: map[string]func(*corev1.Pod){},
		sent: map[string]uint64{}}
}

// Adopt learns which jobs ctld already runs for pods (JobSpec.k8s_pod_uids: one UID for a
// pod's job, the members in rank order for a group's gang job), so a restarted bridge follows
// them instead of submitting again. Jobs that ended long enough ago
// to have left ctld's memory belong to pods Kubernetes already shows as ended (never re-run).
func (p *Pods) Adopt(ctx context.Context) (int, error) {
	resp, err := p.api.ListJobs(ctx, &pb.ListJobsRequest{IncludeFinished: true, ExpandArrays: true})
	if err != nil {
		return 0, fmt.Errorf("listing jobs to adopt: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, j := range resp.GetJobs() {
		uids := j.GetSpec().GetK8SPodUids()
		for rank, uid := range uids {
			if old, ok := p.adopted[types.UID(uid)]; !ok || j.GetJobId() > old {
				p.adopted[types.UID(uid)] = j.GetJobId()
				if p.gangs != nil && len(uids) > 1 {
					p.gangs.seats[types.UID(uid)] = rank
				}
			}
		}
		if len(uids) > 0 {
			n++
		}
	}
	return n, nil
}

func key(ns, name string) string { return ns + "/" + name }

// submit creates the job for a pod (a pod group's member waits for its group: gangs.go), or
// adopts the one ctld already has for its UID.
func (p *Pods) submit(ctx context.Context, pod *corev1.Pod, node, partition string) error {
	if p.gangs != nil {
		if handled, err := p.gangs.add(ctx, pod, node, partition); handled {
			return err
		}
	}
	return p.submitOne(ctx, pod, node, partition)
}

// submitOne: one pod, one job.
func (p *Pods) submitOne(ctx context.Context, pod *corev1.Pod, node, partition string) error {
	p.mu.Lock()
	jobID, adopted := p.adopted[pod.UID]
	p.mu.Unlock()
	if !adopted {
		entry, err := p.table.Lookup(pod.Namespace)
		if err != nil {
			return err
		}
		spec, err := translate.PodToJob(pod, entry, translate.Options{Partition: partition, Runtime: p.Runtime})
		if err != nil {
			return err
		}
		resp, err := p.api.SubmitJob(ctx, &pb.SubmitJobRequest{Spec: spec})
		if err != nil {
			return fmt.Errorf("pod %s/%s: tessera-ctld refused the job: %w", pod.Namespace, pod.Name, err)
		}
		jobID = resp.GetJobId()
		log.G(ctx).Infof("pod %s/%s (uid %s) -> Tessera job %d", pod.Namespace, pod.Name, pod.UID, jobID)
	} else {
		log.G(ctx).Infof("pod %s/%s (uid %s) adopted Tessera job %d", pod.Namespace, pod.Name, pod.UID, jobID)
	}
	t := &tracked{pod: pod.DeepCopy(), node: node, jobID: jobID}
	t.job = &pb.JobInfo{JobId: jobID, State: pb.JobState_PENDING, Reason: "Submitted"}
	t.pod.Status = *translate.PodStatus(pod, t.job, p.now())
	p.mu.Lock()
	p.pods[key(pod.Namespace, pod.Name)] = t
	p.adopted[pod.UID] = jobID
	p.mu.Unlock()
	return nil
}

// remove cancels a pod's job (when it has not ended) and reports the pod terminated.
func (p *Pods) remove(ctx context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	p.mu.Lock()
	t, ok := p.pods[k]
	p.mu.Unlock()
	if !ok {
		return errdefs.NotFoundf("pod %s is not run by the bridge", k)
	}
	if t.jobID != 0 && (t.job == nil || !terminal(t.job.GetState())) { // a member: ends the gang
		resp, err := p.api.CancelJob(ctx, &pb.CancelJobRequest{JobIds: []uint64{t.jobID}})
		if err != nil {
			return fmt.Errorf("cancelling Tessera job %d of pod %s: %w", t.jobID, k, err)
		}
		if len(resp.GetErrors()) > 0 {
			log.G(ctx).Warnf("cancel of job %d: %v", t.jobID, resp.GetErrors())
		}
		log.G(ctx).Infof("pod %s deleted: cancelled Tessera job %d", k, t.jobID)
	}
	p.mu.Lock()
	delete(p.pods, k)
	if t.member != nil {
		p.gangs.forget(k, t.member)
	}
	notify := p.notifier[t.node]
	p.mu.Unlock()
	done := t.pod.DeepCopy()
	job := &pb.JobInfo{JobId: t.jobID, State: pb.JobState_CANCELLED, ExitSignal: 15}
	if t.job != nil && terminal(t.job.GetState()) {
		job = t.job
	}
	done.Status = *translate.PodStatus(done, job, p.now())
	if notify != nil {
		notify(done)
	}
	return nil
}

func terminal(s pb.JobState) bool {
	switch s {
	case pb.JobState_PENDING, pb.JobState_RUNNING, pb.JobState_SUSPENDED, pb.JobState_COMPLETING,
		pb.JobState_JOB_STATE_UNSPECIFIED:
		return false
	}
	return true
}

// refresh reads every followed job from ctld.
func (p *Pods) refresh(ctx context.Context) error {
	p.mu.Lock()
	ids := make([]uint64, 0, len(p.pods))
	seen := map[uint64]bool{}
	for _, t := range p.pods {
		if !t.ended && t.jobID != 0 && !seen[t.jobID] {
			seen[t.jobID] = true
			ids = append(ids, t.jobID)
		}
	}
	p.mu.Unlock()
	return p.refreshJobs(ctx, ids)
}

// refreshJobs reads the given jobs from ctld and reports the pods whose status changed.
func (p *Pods) refreshJobs(ctx context.Context, ids []uint64) error {
	if len(ids) == 0 {
		return nil
	}
	resp, err := p.api.ListJobs(ctx, &pb.ListJobsRequest{JobIds: ids, IncludeFinished: true, ExpandArrays: true})
	if err != nil {
		return err
	}
	byID := map[uint64]*pb.JobInfo{}
	for _, j := range resp.GetJobs() {
		byID[j.GetJobId()] = j
	}
	var updates []update
	p.mu.Lock()
	for _, t := range p.pods {
		if j, ok := byID[t.jobID]; ok && !t.ended {
			updates = p.observe(t, j, updates)
		}
	}
	p.mu.Unlock()
	p.send(updates)
	return nil
}

// update is a pod status to report through its node's callback (outside p.mu); seq orders the
// updates as they were made (under p.mu).
type update struct {
	cb  func(*corev1.Pod)
	pod *corev1.Pod
	seq uint64
}

// newUpdate makes an update (with p.mu held).
func (p *Pods) newUpdate(cb func(*corev1.Pod), pod *corev1.Pod) update {
	p.seq++
	return update{cb, pod, p.seq}
}

// send reports updates made under p.mu, after it was released. Goroutines that made updates of
// one pod may send them in another order than they made them (a gang of /bin/true pods: the
// Running of its start sent after the Succeeded of its end, and the pod stayed Running for good,
// issue 18's benchmark): an update older than one already sent for its pod is dropped.
func (p *Pods) send(us []update) {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	for _, u := range us {
		k := key(u.pod.Namespace, u.pod.Name)
		if u.seq <= p.sent[k] {
			continue
		}
		p.sent[k] = u.seq
		u.cb(u.pod)
	}
}

// observe takes a new view of a pod's job (with p.mu held); a change of what the pod shows is
// appended to `us`. A gang member sees its own task's end (gangs.go).
func (p *Pods) observe(t *tracked, j *pb.JobInfo, us []update) []update {
	if t.member != nil {
		t.member.job = j
		j = t.member.view(j)
	}
	// A wrapped pod's containers end one by one while its job runs (its init containers first):
	// their exit codes change what the pod shows though the job's view does not.
	exits := p.exits(t.pod, j)
	if sameJobView(t.job, j) && maps.Equal(t.exits, exits) {
		return us
	}
	t.job, t.exits = j, exits
	t.ended = terminal(j.GetState())
	np := t.pod.DeepCopy()
	np.Status = *translate.PodStatusWithExits(np, j, p.now(), exits)
	t.pod = np
	if cb := p.notifier[t.node]; cb != nil {
		us = append(us, p.newUpdate(cb, np.DeepCopy()))
	}
	return us
}

// sameJobView: nothing the pod status shows has changed.
func sameJobView(a, b *pb.JobInfo) bool {
	return a != nil && a.GetState() == b.GetState() && a.GetReason() == b.GetReason() &&
		a.GetStartTime() == b.GetStartTime() && a.GetNodelist() == b.GetNodelist()
}

// lookup returns a copy of a tracked pod, or NotFound.
func (p *Pods) lookup(ns, name, node string) (*tracked, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.pods[key(ns, name)]
	if !ok || (node != "" && t.node != node) {
		return nil, errdefs.NotFoundf("pod %s/%s is not run by the bridge", ns, name)
	}
	c := *t
	c.pod = t.pod.DeepCopy()
	return &c, nil
}
