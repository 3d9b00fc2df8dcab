package provider

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tessera-hpc/tessera/bridge/internal/mapping"
	"github.com/tessera-hpc/tessera/bridge/internal/podgroup"
)

// A pod group's member that needs the container script (two containers; the podman runtime) is
// refused with a message that says why, and is not tracked. No ctld is called: api is nil.
func TestGangMemberNeedingTheContainerScriptIsRefused(t *testing.T) {
	text := "namespaces:\n  team-a:\n    user: alice\n    workdir: /tmp\n" +
		"  team-p:\n    user: alice\n    workdir: /tmp\n    runtime: podman\n"
	table, err := mapping.Parse("m.yaml", []byte(text), func(string) (uint32, error) { return 1001, nil })
	if err != nil {
		t.Fatal(err)
	}
	p := NewPods(nil, table)
	p.EnableGroups(nil, podgroup.Options{})
	mk := func(ns, name string, containers int) *corev1.Pod {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + name),
			Annotations: map[string]string{podgroup.VolcanoAnnotation: "g"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
		for i := 0; i < containers; i++ {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
				Name: string(rune('a' + i)), Image: "busybox", Command: []string{"true"}})
		}
		return pod
	}
	ctx := context.Background()
	for _, c := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{mk("team-a", "two", 2), "2 containers"},
		{mk("team-p", "oci", 1), "runtime podman"},
	} {
		handled, err := p.gangs.add(ctx, c.pod, "tessera-debug", "debug")
		if !handled || err == nil || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), "gang jobs cannot run yet") {
			t.Errorf("pod %s: handled %v, err %v", c.pod.Name, handled, err)
		}
		if _, err := p.lookup(c.pod.Namespace, c.pod.Name, ""); err == nil {
			t.Errorf("pod %s: refused yet tracked", c.pod.Name)
		}
	}
}
