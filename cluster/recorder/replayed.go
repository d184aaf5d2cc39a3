package recorder

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations karplab replay writes on every object it creates. The API server dates a
// created object by the replay's moment, so the history keeps production's times beside it.
const (
	// ReplayedAnnotation holds the capture's time (RFC 3339).
	ReplayedAnnotation = "karplab.dev/replayed-from"
	// CapturedCreatedAnnotation holds the object's creationTimestamp in the captured cluster.
	CapturedCreatedAnnotation = "karplab.dev/captured-created"
)

// CreatedAt is when o was created: in production for a replayed object, else its
// creationTimestamp.
func CreatedAt(o metav1.Object) time.Time {
	if t, err := time.Parse(time.RFC3339, o.GetAnnotations()[CapturedCreatedAnnotation]); err == nil {
		return t.UTC()
	}
	return o.GetCreationTimestamp().UTC()
}

// ReplayedFrom is the capture time of a replayed object; ok is false for any other object.
func ReplayedFrom(o metav1.Object) (captured time.Time, ok bool) {
	t, err := time.Parse(time.RFC3339, o.GetAnnotations()[ReplayedAnnotation])
	return t.UTC(), err == nil
}
