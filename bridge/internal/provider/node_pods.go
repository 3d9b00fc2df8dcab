package provider

import (
	"context"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// NodePods is one virtual node's view of Pods: nodeutil.Provider and node.PodNotifier.
type NodePods struct {
	*Pods
	Name      string // the Kubernetes node
	Partition string // the Tessera partition its jobs go to
}

// Node returns the view for one virtual node.
func (p *Pods) Node(name, partition string) *NodePods {
	return &NodePods{Pods: p, Name: name, Partition: partition}
}

// CreatePod submits the pod's job (or adopts the one it already has).
func (n *NodePods) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	return n.submit(ctx, pod, n.Name, n.Partition)
}

// UpdatePod keeps the new spec's metadata; a running job's command cannot change.
func (n *NodePods) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t, ok := n.pods[key(pod.Namespace, pod.Name)]; ok {
		st := t.pod.Status
		t.pod = pod.DeepCopy()
		t.pod.Status = st
	}
	return nil
}

// DeletePod cancels the pod's job and reports the pod terminated.
func (n *NodePods) DeletePod(ctx context.Context, pod *corev1.Pod) error { return n.remove(ctx, pod) }

// GetPod returns the pod with the status the bridge reports.
func (n *NodePods) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	t, err := n.lookup(ns, name, n.Name)
	if err != nil {
		return nil, err
	}
	return t.pod, nil
}

// GetPodStatus returns the pod's status from its job.
func (n *NodePods) GetPodStatus(ctx context.Context, ns, name string) (*corev1.PodStatus, error) {
	pod, err := n.GetPod(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods lists this node's pods.
func (n *NodePods) GetPods(context.Context) ([]*corev1.Pod, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*corev1.Pod
	for _, t := range n.pods {
		if t.node == n.Name {
			out = append(out, t.pod.DeepCopy())
		}
	}
	return out, nil
}

// NotifyPods registers the library's status callback for this node.
func (n *NodePods) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notifier[n.Name] = cb
}

// GetContainerLogs serves the job's output file (see logs.go).
func (n *NodePods) GetContainerLogs(ctx context.Context, ns, pod, container string,
	opts api.ContainerLogOpts) (io.ReadCloser, error) {
	return n.Pods.containerLogs(ctx, ns, pod, container, opts)
}

var errNotSupported = errdefs.InvalidInput("not supported by tessera-bridge")

// RunInContainer runs a command in the pod's job (see exec.go).
func (n *NodePods) RunInContainer(ctx context.Context, ns, pod, container string, cmd []string,
	attach api.AttachIO) error {
	return n.Pods.runInContainer(ctx, ns, pod, container, cmd, attach)
}

// AttachToContainer: not supported.
func (n *NodePods) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errNotSupported
}

// GetStatsSummary: not supported.
func (n *NodePods) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return nil, errNotSupported
}

// GetMetricsResource: not supported.
func (n *NodePods) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, errNotSupported
}

// PortForward: not supported.
func (n *NodePods) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return errNotSupported
}

// AllPods lists every pod the bridge runs, on any of its nodes.
func (p *Pods) AllPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(p.pods))
	for _, t := range p.pods {
		out = append(out, t.pod.DeepCopy())
	}
	return out, nil
}
