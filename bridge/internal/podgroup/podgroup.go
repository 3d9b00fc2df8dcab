// Package podgroup recognizes the pod groups Kubernetes users and their frameworks declare and
// turns a complete group into one Tessera gang job. Pure: no I/O beyond reading the exit files
// the gang's tasks leave (ReadExit) and the group objects a Lookup fetches (lookup.go).
//
// Groups, in the order a pod is checked (the first that names a group wins):
//   - Kubernetes' own PodGroup (scheduling.k8s.io/v1beta1, 1.37, GenericWorkload feature gate):
//     the pod's spec.schedulingGroup.podGroupName; minMember = spec.schedulingPolicy.gang.minCount
//     (a PodGroup with the basic policy is no gang: its pods run as plain pods).
//   - Volcano's PodGroup (scheduling.volcano.sh/v1beta1): annotation scheduling.k8s.io/group-name
//     (or scheduling.volcano.sh/group-name); minMember = spec.minMember.
//   - scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1, the coscheduling plugin; what
//     Kubeflow's training operator and trainer create for gang scheduling): label
//     scheduling.x-k8s.io/pod-group; minMember = spec.minMember.
//   - Kueue's plain pod groups: label kueue.x-k8s.io/pod-group-name with the annotation
//     kueue.x-k8s.io/pod-group-total-count as minMember (no object to read).
//
// A group is keyed by kind, namespace and name, never by virtual node: members bound to
// different virtual nodes (partitions) still gather into one job.
package podgroup

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind says which API declared a group.
type Kind string

const (
	KindKubernetes   Kind = "scheduling.k8s.io/PodGroup"
	KindVolcano      Kind = "scheduling.volcano.sh/PodGroup"
	KindCoscheduling Kind = "scheduling.x-k8s.io/PodGroup"
	KindKueue        Kind = "kueue.x-k8s.io/pod-group"
)

// The labels and annotations that name a pod's group.
const (
	VolcanoAnnotation       = "scheduling.k8s.io/group-name"
	VolcanoAnnotationLegacy = "scheduling.volcano.sh/group-name"
	CoschedulingLabel       = "scheduling.x-k8s.io/pod-group"
	KueueGroupLabel         = "kueue.x-k8s.io/pod-group-name"
	KueueTotalAnnotation    = "kueue.x-k8s.io/pod-group-total-count"
)

// GVR is where each object kind is served (Kueue groups have no object).
var GVR = map[Kind]schema.GroupVersionResource{
	KindKubernetes:   {Group: "scheduling.k8s.io", Version: "v1beta1", Resource: "podgroups"},
	KindVolcano:      {Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"},
	KindCoscheduling: {Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"},
}

// Ref names one group.
type Ref struct {
	Kind            Kind
	Namespace, Name string
}

func (r Ref) String() string { return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name) }

// Of returns the group a pod declares, if any.
func Of(pod *corev1.Pod) (Ref, bool) {
	ref := func(k Kind, name string) (Ref, bool) {
		return Ref{Kind: k, Namespace: pod.Namespace, Name: name}, true
	}
	if sg := pod.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil && *sg.PodGroupName != "" {
		return ref(KindKubernetes, *sg.PodGroupName)
	}
	for _, a := range []string{VolcanoAnnotation, VolcanoAnnotationLegacy} {
		if n := pod.Annotations[a]; n != "" {
			return ref(KindVolcano, n)
		}
	}
	if n := pod.Labels[CoschedulingLabel]; n != "" {
		return ref(KindCoscheduling, n)
	}
	if n := pod.Labels[KueueGroupLabel]; n != "" {
		return ref(KindKueue, n)
	}
	return Ref{}, false
}

// KueueMinMember is a Kueue group's size, from any member's annotation.
func KueueMinMember(pod *corev1.Pod) (int, error) {
	v, ok := pod.Annotations[KueueTotalAnnotation]
	if !ok {
		return 0, fmt.Errorf("pod %s/%s has label %s but no annotation %s (the group's size)",
			pod.Namespace, pod.Name, KueueGroupLabel, KueueTotalAnnotation)
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("pod %s/%s: annotation %s=%q is not a positive count",
			pod.Namespace, pod.Name, KueueTotalAnnotation, v)
	}
	return n, nil
}

// MinMember reads a group object's minimum member count. 0 with a nil error: the object
// declares no gang (Kubernetes' basic policy), its pods run one job each.
func MinMember(k Kind, obj *unstructured.Unstructured) (int, error) {
	where := fmt.Sprintf("%s %s/%s", k, obj.GetNamespace(), obj.GetName())
	var path []string
	switch k {
	case KindKubernetes:
		if _, basic, _ := unstructured.NestedMap(obj.Object, "spec", "schedulingPolicy", "basic"); basic {
			return 0, nil
		}
		path = []string{"spec", "schedulingPolicy", "gang", "minCount"}
	case KindVolcano, KindCoscheduling:
		path = []string{"spec", "minMember"}
	default:
		return 0, fmt.Errorf("%s: no object to read", where)
	}
	n, found, err := unstructured.NestedInt64(obj.Object, path...)
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %w", where, strings.Join(path, "."), err)
	}
	if !found || n < 1 {
		return 0, fmt.Errorf("%s: %s is missing or not positive", where, strings.Join(path, "."))
	}
	return int(n), nil
}
