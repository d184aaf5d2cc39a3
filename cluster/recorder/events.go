package recorder

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EventTime is when an event last happened: its last timestamp, else its event time (the
// events.k8s.io API's), else its first timestamp, else when it was created.
func EventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}
