package provider

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/log"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	pb "github.com/tessera-hpc/tessera/bridge/internal/gen/tesserav1"
)

// Recorder posts Kubernetes events (client-go's record.EventRecorder satisfies it).
type Recorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{})
}

// SetRecorder makes job events that Kubernetes users should see (preemption, requeue, ...)
// events on the job's pods.
func (p *Pods) SetRecorder(r Recorder) { p.events = r }

// podEvents: the Tessera job events shown on a job's pods, as (type, reason).
var podEvents = map[string][2]string{
	"started":           {corev1.EventTypeNormal, "TesseraStarted"},
	"preempted":         {corev1.EventTypeWarning, "Preempted"},
	"requeue_requested": {corev1.EventTypeNormal, "RequeueRequested"},
	"requeued":          {corev1.EventTypeWarning, "Requeued"},
	"suspended":         {corev1.EventTypeWarning, "Suspended"},
	"resumed":           {corev1.EventTypeNormal, "Resumed"},
	"gpu_failure":       {corev1.EventTypeWarning, "GPUFailure"},
	"held":              {corev1.EventTypeWarning, "Held"},
	"released":          {corev1.EventTypeNormal, "Released"},
}

// Follow keeps the pods' status current until ctx ends. It follows tessera-ctld's WatchJobs
// stream: every event of a followed job re-reads that job (events arriving together are read
// in one ListJobs) and the events in podEvents become Kubernetes events on its pods. When the
// stream breaks (ctld restarts, the network drops) it reconnects with backoff from the last
// event seen (ctld replays what was missed) and re-reads every followed job. A pending job's
// reason changes without an event, so every `resync` all followed jobs are re-read as well.
func (p *Pods) Follow(ctx context.Context, resync time.Duration) {
	if p.gangs != nil {
		go p.gangs.run(ctx, time.Second)
	}
	dirty := make(chan uint64, 4096)
	go p.readDirty(ctx, dirty)
	go p.resync(ctx, resync)
	var seq uint64
	backoff := 200 * time.Millisecond
	for {
		n, err := p.watchOnce(ctx, &seq, dirty)
		if ctx.Err() != nil {
			return
		}
		if n > 0 {
			backoff = 200 * time.Millisecond
		}
		log.G(ctx).Warnf("following tessera-ctld's job events: %v; reconnecting in %v", err, backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// watchOnce reads one WatchJobs stream until it breaks; it returns how many events it read.
func (p *Pods) watchOnce(ctx context.Context, seq *uint64, dirty chan<- uint64) (int, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := p.api.WatchJobs(sctx, &pb.WatchJobsRequest{SinceSeq: *seq})
	if err != nil {
		return 0, err
	}
	if *seq > 0 {
		log.G(ctx).Infof("following tessera-ctld's job events again from event %d", *seq)
	}
	// What changed while no stream was open.
	if err := p.refresh(ctx); err != nil {
		return 0, fmt.Errorf("re-reading jobs: %w", err)
	}
	n := 0
	for {
		ev, err := stream.Recv()
		if err != nil {
			return n, err
		}
		n++
		*seq = ev.GetSeq()
		pods := p.podsOfJob(ev.GetJobId())
		if len(pods) == 0 {
			continue
		}
		p.record(ev, pods)
		select {
		case dirty <- ev.GetJobId():
		default: // full: the next resync reads it
		}
	}
}

// podsOfJob returns copies of the followed pods a job runs (several for a gang job).
func (p *Pods) podsOfJob(jobID uint64) []*corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*corev1.Pod
	for _, t := range p.pods {
		if t.jobID == jobID && !t.ended {
			out = append(out, t.pod.DeepCopy())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (p *Pods) record(ev *pb.JobEvent, pods []*corev1.Pod) {
	kind, ok := podEvents[ev.GetType()]
	if !ok || p.events == nil {
		return
	}
	for _, pod := range pods {
		p.events.Eventf(pod, kind[0], kind[1], "Tessera job %d %s %s", ev.GetJobId(),
			ev.GetType(), ev.GetDetail())
	}
}

// readDirty re-reads the jobs events named, gathering those that arrive within 20 ms.
func (p *Pods) readDirty(ctx context.Context, dirty <-chan uint64) {
	for {
		var first uint64
		select {
		case <-ctx.Done():
			return
		case first = <-dirty:
		}
		ids := map[uint64]bool{first: true}
		window := time.After(20 * time.Millisecond)
	gather:
		for {
			select {
			case id := <-dirty:
				ids[id] = true
			case <-window:
				break gather
			}
		}
		list := make([]uint64, 0, len(ids))
		for id := range ids {
			list = append(list, id)
		}
		if err := p.refreshJobs(ctx, list); err != nil && ctx.Err() == nil {
			log.G(ctx).Warnf("reading jobs %v: %v", list, err)
		}
	}
}

func (p *Pods) resync(ctx context.Context, period time.Duration) {
	every(ctx, period, func() {
		if err := p.refresh(ctx); err != nil && ctx.Err() == nil {
			log.G(ctx).Warnf("re-reading jobs: %v", err)
		}
	})
}
