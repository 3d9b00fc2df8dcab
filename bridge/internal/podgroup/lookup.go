package podgroup

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// Lookup reads a group's minimum member count from its object in the apiserver.
type Lookup interface {
	MinMember(ctx context.Context, g Ref) (int, error)
}

// Dynamic reads group objects through the dynamic client: the bridge needs only a few fields
// of three CRD kinds, so it reads them as unstructured objects instead of importing each
// project's API module.
type Dynamic struct{ Client dynamic.Interface }

// MinMember fetches the group's object; a missing object or kind (CRD not installed) is an
// error that names it, and the pods wait.
func (d Dynamic) MinMember(ctx context.Context, g Ref) (int, error) {
	gvr, ok := GVR[g.Kind]
	if !ok {
		return 0, fmt.Errorf("%s has no object to read", g)
	}
	obj, err := d.Client.Resource(gvr).Namespace(g.Namespace).Get(ctx, g.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("%s not found (is %s served? is the object created?)", g, gvr.GroupResource())
	}
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", g, err)
	}
	return MinMember(g.Kind, obj)
}
