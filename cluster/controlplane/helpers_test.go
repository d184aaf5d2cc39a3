package controlplane

import (
	"context"
	"fmt"
	"net"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// authzv1SAR asks the API server's authorizer (Node,RBAC) whether a user may do something.
type authzv1SAR struct {
	user, verb, resource, sub string
	groups                    []string
}

func (s *authzv1SAR) check(ctx context.Context, c kubernetes.Interface) (bool, error) {
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User:   s.user,
		Groups: s.groups,
		ResourceAttributes: &authzv1.ResourceAttributes{
			Namespace: "default", Verb: s.verb, Resource: s.resource, Subresource: s.sub,
		},
	}}
	got, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("SubjectAccessReview: %w", err)
	}
	return got.Status.Allowed, nil
}

// portFree reports an error if something still listens on addr.
func portFree(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("port %s still in use: %w", addr, err)
	}
	return ln.Close()
}
