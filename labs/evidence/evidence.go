package evidence

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster/recorder"
	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

// Evidence is the correlation record of DESIGN.md: one row per workload pod, joined across
// the two control planes by identifiers only — pod UID, the NodeClaim Karpenter nominated,
// the providerID, the EC2 instance ID and the Node name — with every timestamp kept.
type Evidence struct {
	// TakenAt and every time of the record are lab time; LabSkips are the skips that set
	// lab time ahead of the wall clock (none: the two are the same).
	TakenAt  time.Time `json:"takenAt"`
	LabSkips []LabSkip `json:"labSkips,omitempty"`
	// Replay is set in a lab karplab replay loaded from a capture: times before its load are
	// production's, from the bundle.
	Replay     *ReplayRow     `json:"replay,omitempty"`
	Pods       []PodRow       `json:"pods"`
	NodeClaims []NodeClaimRow `json:"nodeClaims"`
	Nodes      []NodeRow      `json:"nodes"`
	Instances  []InstanceRow  `json:"instances"`
	// Leaks are instances tagged for the cluster that run with no NodeClaim behind them.
	Leaks []Leak `json:"leaks,omitempty"`
	// Unattached are the cluster's volumes, snapshots and interfaces no live instance uses.
	Unattached []UnattachedRow `json:"unattached,omitempty"`
	// Denied are the workload pods that wait with no machine, with the mismatch that says why.
	Denied []DeniedPod `json:"denied,omitempty"`
	// Launches are the CreateFleet and RunInstances calls in the audit trail, denials included.
	Launches []AuditCall `json:"launches"`
	Cost     Cost        `json:"cost"`
	// Budgets are the account's cost budgets with the alerts they fired (lab time).
	Budgets []budgets.Budget `json:"budgets,omitempty"`
}

// ReplayRow dates a replay: when production was captured and when the lab loaded it.
type ReplayRow struct {
	CapturedAt time.Time `json:"capturedAt"`
	LoadedAt   time.Time `json:"loadedAt"`
}

// PodRow is one workload pod's chain: pending demand, provisioning decision, machine, node, run.
type PodRow struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// Owner is the controller that made the pod, e.g. "ReplicaSet/ziba-render-worker-6c6b9cc854".
	Owner    string    `json:"owner,omitempty"`
	Requests string    `json:"requests,omitempty"`
	Created  time.Time `json:"created"`
	// PendingSince is when the scheduler first marked the pod Unschedulable, and PendingReason
	// its message.
	PendingSince  *time.Time `json:"pendingSince,omitempty"`
	PendingReason string     `json:"pendingReason,omitempty"`
	// NominatedNodeClaim is the NodeClaim Karpenter's Nominated event names for this pod.
	NominatedNodeClaim string     `json:"nominatedNodeClaim,omitempty"`
	NominatedAt        *time.Time `json:"nominatedAt,omitempty"`
	// KarpenterMessage is Karpenter's last FailedScheduling text, quoted: why no NodeClaim.
	KarpenterMessage string `json:"karpenterMessage,omitempty"`
	// NodeClaim, InstanceID and Node are where the pod ran, joined by providerID.
	NodeClaim   string     `json:"nodeClaim,omitempty"`
	InstanceID  string     `json:"instanceId,omitempty"`
	Node        string     `json:"node,omitempty"`
	ScheduledAt *time.Time `json:"scheduledAt,omitempty"`
	StartedAt   *time.Time `json:"startedAt,omitempty"`
	Phase       string     `json:"phase"`
	// TerminatingAt is when the pod was first seen with a deletionTimestamp (an eviction
	// or delete began: its ReplicaSet replaces it from then on), DeletedAt when it was gone.
	TerminatingAt *time.Time `json:"terminatingAt,omitempty"`
	DeletedAt     *time.Time `json:"deletedAt,omitempty"`
	// Usage is what the lab's metrics-server observed of it (nil without a metrics API).
	Usage *UsageRow `json:"usage,omitempty"`
}

// LeftAt is when the pod began to leave its node, nil while it stays.
func (p PodRow) LeftAt() *time.Time {
	if p.TerminatingAt != nil {
		return p.TerminatingAt
	}
	return p.DeletedAt
}

// NodeClaimRow is one NodeClaim's life.
type NodeClaimRow struct {
	Name         string     `json:"name"`
	UID          string     `json:"uid"`
	NodePool     string     `json:"nodePool"`
	Created      time.Time  `json:"created"`
	Launched     *time.Time `json:"launched,omitempty"`
	Registered   *time.Time `json:"registered,omitempty"`
	Initialized  *time.Time `json:"initialized,omitempty"`
	ProviderID   string     `json:"providerID,omitempty"`
	InstanceID   string     `json:"instanceId,omitempty"`
	NodeName     string     `json:"nodeName,omitempty"`
	InstanceType string     `json:"instanceType,omitempty"`
	Zone         string     `json:"zone,omitempty"`
	CapacityType string     `json:"capacityType,omitempty"`
	// DisruptionReason is why Karpenter removed it (Underutilized, Empty, Drifted, ...).
	DisruptionReason  string     `json:"disruptionReason,omitempty"`
	DeletionRequested *time.Time `json:"deletionRequested,omitempty"`
	Deleted           *time.Time `json:"deleted,omitempty"`
	// Failures quotes launch/registration failures (conditions and warning events).
	Failures []string `json:"failures,omitempty"`
}

// NodeRow is one Node's life.
type NodeRow struct {
	Name       string     `json:"name"`
	UID        string     `json:"uid"`
	ProviderID string     `json:"providerID"`
	InstanceID string     `json:"instanceId,omitempty"`
	NodePool   string     `json:"nodePool,omitempty"`
	Registered time.Time  `json:"registered"`
	Ready      *time.Time `json:"ready,omitempty"`
	Deleted    *time.Time `json:"deleted,omitempty"`
}

// InstanceRow is one EC2 instance with its disks, network interface and bill.
type InstanceRow struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Zone         string     `json:"zone"`
	CapacityType string     `json:"capacityType"`
	State        string     `json:"state"`
	SubnetID     string     `json:"subnetId,omitempty"`
	PrivateDNS   string     `json:"privateDNS,omitempty"`
	ImageID      string     `json:"imageId,omitempty"`
	HTTPTokens   string     `json:"httpTokens,omitempty"`
	LaunchTime   time.Time  `json:"launchTime"`
	LaunchedBy   string     `json:"launchedBy,omitempty"`
	LaunchCall   string     `json:"launchCall,omitempty"` // action and request ID
	TerminatedAt *time.Time `json:"terminatedAt,omitempty"`
	TerminatedBy string     `json:"terminatedBy,omitempty"`
	NodeClaim    string     `json:"nodeClaim,omitempty"` // its karpenter.sh/nodeclaim tag
	NodePool     string     `json:"nodePool,omitempty"`
	// FleetID and LaunchTemplate (ID:version) come from the system tags EC2 puts on what a
	// fleet or a template launched: which CreateFleet made it, even once the call is gone.
	FleetID        string            `json:"fleetId,omitempty"`
	LaunchTemplate string            `json:"launchTemplate,omitempty"`
	Tags           map[string]string `json:"tags"`
	Volumes        []VolumeRow       `json:"volumes"`
	ENIs           []ENIRow          `json:"enis"`
	PricePerHour   float64           `json:"pricePerHour"`
	CostUSD        float64           `json:"costUSD"`
	BilledUntil    *time.Time        `json:"billedUntil,omitempty"`
}

// VolumeRow is one EBS volume launched with an instance.
type VolumeRow struct {
	ID                  string `json:"id"`
	SizeGiB             int32  `json:"sizeGiB,omitempty"`
	Type                string `json:"type,omitempty"`
	Encrypted           *bool  `json:"encrypted,omitempty"` // nil: no longer describable
	DeleteOnTermination *bool  `json:"deleteOnTermination,omitempty"`
	Deleted             bool   `json:"deleted"`
	// Outlived: the instance is terminated and the volume still exists (and bills).
	Outlived bool              `json:"outlived,omitempty"`
	Tags     map[string]string `json:"tags,omitempty"`
	CostUSD  float64           `json:"costUSD"`
}

// ENIRow is an instance's network interface.
type ENIRow struct {
	ID        string `json:"id"`
	PrivateIP string `json:"privateIp,omitempty"`
	Deleted   bool   `json:"deleted"`
	// Outlived: the instance is terminated and the interface still exists (and holds its IP).
	Outlived bool              `json:"outlived,omitempty"`
	Tags     map[string]string `json:"tags,omitempty"`
}

// DeniedPod is a workload pod waiting with no node: the quoted mismatch that explains it, and
// what was pursued for it anyway (for a properly denied pod: no NodeClaim, no launch call, no
// instance).
type DeniedPod struct {
	Namespace    string     `json:"namespace"`
	Name         string     `json:"name"`
	UID          string     `json:"uid"`
	Requests     string     `json:"requests,omitempty"`
	PendingSince *time.Time `json:"pendingSince,omitempty"`
	// Mismatch quotes Karpenter's FailedScheduling text, else the scheduler's.
	Mismatch string `json:"mismatch,omitempty"`
	// NominatedNodeClaim is a NodeClaim Karpenter nominated for it; LaunchCalls and Instances
	// are the launch calls tagged for that NodeClaim and the instances carrying its tag.
	NominatedNodeClaim string   `json:"nominatedNodeClaim,omitempty"`
	LaunchCalls        []string `json:"launchCalls,omitempty"`
	Instances          []string `json:"instances,omitempty"`
}

// deniedPods lists the pending workload pods with no node, and what was pursued for them.
func deniedPods(ev *Evidence) []DeniedPod {
	var out []DeniedPod
	for _, p := range ev.Pods {
		if p.Phase != "Pending" || p.Node != "" {
			continue
		}
		d := DeniedPod{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Requests: p.Requests, PendingSince: p.PendingSince,
			Mismatch: p.KarpenterMessage, NominatedNodeClaim: p.NominatedNodeClaim}
		if d.Mismatch == "" {
			d.Mismatch = p.PendingReason
		}
		if nc := p.NominatedNodeClaim; nc != "" {
			for _, c := range ev.Launches {
				if c.NodeClaim == nc {
					result := strings.Join(c.Created, " ")
					if c.ErrorCode != "" {
						result = c.ErrorCode
					}
					d.LaunchCalls = append(d.LaunchCalls, c.Action+" "+c.RequestID+": "+result)
				}
			}
			for _, in := range ev.Instances {
				if in.NodeClaim == nc {
					d.Instances = append(d.Instances, in.ID+" ("+in.Type+", "+in.State+")")
				}
			}
		}
		out = append(out, d)
	}
	return out
}

// Leak is a running instance with no NodeClaim.
type Leak struct {
	InstanceID string    `json:"instanceId"`
	NodeClaim  string    `json:"nodeClaim,omitempty"` // the tag names a NodeClaim that is gone
	FleetID    string    `json:"fleetId,omitempty"`   // the fleet that launched it (its system tag)
	Since      time.Time `json:"since"`
	CostUSD    float64   `json:"costUSD"`
}

// AuditCall is one launch call from the EC2 audit trail.
type AuditCall struct {
	Time      time.Time `json:"time"`
	Action    string    `json:"action"`
	Caller    string    `json:"caller"`
	RequestID string    `json:"requestId"`
	NodeClaim string    `json:"nodeClaim,omitempty"` // from the request's tags
	NodePool  string    `json:"nodePool,omitempty"`
	Created   []string  `json:"created,omitempty"`
	ErrorCode string    `json:"errorCode,omitempty"`
	// Reason is the decoded policy denial or the error message.
	Reason string `json:"reason,omitempty"`
	// Errors are CreateFleet's per-override errors (e.g. InsufficientInstanceCapacity).
	Errors []string `json:"errors,omitempty"`
}

// Cost sums the billing ledger.
type Cost struct {
	TotalUSD float64 `json:"totalUSD"`
	// ByTag maps a cost-allocation tag key (application, environment, owner) to its groups.
	ByTag map[string][]billing.CostGroup `json:"byTag"`
	// HourlyNowUSD is what the resources still billed cost per hour.
	HourlyNowUSD float64 `json:"hourlyNowUSD"`
}

// CostTagKeys are the seed's cost-allocation tags.
var CostTagKeys = []string{"application", "environment", "owner"}

var (
	nominatedRe  = regexp.MustCompile(`nodeclaim/([a-z0-9.-]+)`)
	systemPrefix = "kube-"
)

// IsWorkloadNamespace tells a learner's namespace from the cluster's own (kube-*).
func IsWorkloadNamespace(ns string) bool {
	return ns != "" && !strings.HasPrefix(ns, systemPrefix)
}

// NominatedNodeClaim returns the NodeClaim a Nominated event's message names ("" if none).
func NominatedNodeClaim(msg string) string {
	if m := nominatedRe.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// InstanceIDFromProviderID returns i-... from aws:///zone/i-... ("" if it is not one).
func InstanceIDFromProviderID(providerID string) string {
	if i := strings.LastIndex(providerID, "/"); i >= 0 && strings.HasPrefix(providerID[i+1:], "i-") {
		return providerID[i+1:]
	}
	return ""
}

// Correlate joins a snapshot into the evidence record.
func Correlate(s *Snapshot) *Evidence { return CorrelateHistory(DecodeHistory(s.History), s) }

// CorrelateHistory is Correlate with s.History already decoded as h, for callers that read
// the history too (the graders), so it is decoded once.
func CorrelateHistory(h *History, s *Snapshot) *Evidence {
	ev := &Evidence{TakenAt: s.TakenAt, LabSkips: s.LabSkips, Budgets: s.Budgets, Replay: replayOf(h)}
	ev.Instances = correlateInstances(s)
	ev.Launches = launchCalls(s.Audit)

	byProviderClaim := map[string]string{}
	for _, v := range SortedVersions(h.NodeClaims, func(a, b karpv1.NodeClaim) bool {
		return recorder.CreatedAt(&a).Before(recorder.CreatedAt(&b))
	}) {
		row := nodeClaimRow(v, h.Events[v.UID])
		if row.ProviderID != "" {
			byProviderClaim[row.ProviderID] = row.Name
		}
		ev.NodeClaims = append(ev.NodeClaims, row)
	}
	nodeByName := map[string]NodeRow{}
	for _, v := range SortedVersions(h.Nodes, func(a, b corev1.Node) bool {
		return recorder.CreatedAt(&a).Before(recorder.CreatedAt(&b))
	}) {
		row := nodeRow(v)
		nodeByName[row.Name] = row
		ev.Nodes = append(ev.Nodes, row)
	}
	for _, v := range SortedVersions(h.Pods, func(a, b corev1.Pod) bool {
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if ca, cb := recorder.CreatedAt(&a), recorder.CreatedAt(&b); !ca.Equal(cb) {
			return ca.Before(cb)
		}
		return a.Name < b.Name
	}) {
		if !IsWorkloadNamespace(v.Last().Namespace) || isDaemonSetPod(v.Last()) {
			continue
		}
		row := podRow(v, h.Events[v.UID])
		if n, ok := nodeByName[row.Node]; ok {
			row.InstanceID = n.InstanceID
			row.NodeClaim = byProviderClaim[n.ProviderID]
		}
		ev.Pods = append(ev.Pods, row)
	}
	nameLaunchedClaims(ev, byProviderClaim)
	addUsage(ev, s.Usage)
	ev.Leaks = findLeaks(ev, h)
	ev.Unattached = findUnattached(s, ev.Instances)
	ev.Denied = deniedPods(ev)
	ev.Cost = costOf(s.Billing)
	return ev
}

// replayOf dates the replay that loaded the history's objects, nil if none was loaded.
func replayOf(h *History) *ReplayRow {
	var r *ReplayRow
	replayedIn(h.NodePools, &r)
	replayedIn(h.NodeClaims, &r)
	replayedIn(h.Nodes, &r)
	replayedIn(h.Pods, &r)
	return r
}

// replayedIn widens *r to every replayed object of m: the capture's time, and the first time
// the recorder saw one (the load).
func replayedIn[T any, P interface {
	*T
	metav1.Object
}](m map[string]*Versions[T], r **ReplayRow) {
	for _, v := range m {
		captured, ok := recorder.ReplayedFrom(P(&v.States[0]))
		if !ok {
			continue
		}
		if *r == nil {
			*r = &ReplayRow{CapturedAt: captured, LoadedAt: v.Seen[0]}
		}
		if v.Seen[0].Before((*r).LoadedAt) {
			(*r).LoadedAt = v.Seen[0]
		}
	}
}

func isDaemonSetPod(p corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

func podRow(v *Versions[corev1.Pod], events []corev1.Event) PodRow {
	last := v.Last()
	row := PodRow{
		Namespace: last.Namespace, Name: last.Name, UID: v.UID,
		Created: recorder.CreatedAt(&last), Phase: string(last.Status.Phase), Node: last.Spec.NodeName,
		Requests: requestsOf(last), DeletedAt: v.Deleted,
	}
	if len(last.OwnerReferences) > 0 {
		row.Owner = last.OwnerReferences[0].Kind + "/" + last.OwnerReferences[0].Name
	}
	if v.Deleted != nil {
		row.Phase = "Deleted"
	}
	// The first Unschedulable verdict dates the pending demand; later states date the rest.
	for i, p := range v.States {
		if p.DeletionTimestamp != nil && row.TerminatingAt == nil {
			row.TerminatingAt = &v.Seen[i]
		}
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodScheduled {
				continue
			}
			if c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && row.PendingSince == nil {
				row.PendingSince = timePtr(c.LastTransitionTime)
				row.PendingReason = c.Message
			}
			if c.Status == corev1.ConditionTrue && row.ScheduledAt == nil {
				row.ScheduledAt = timePtr(c.LastTransitionTime)
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil && row.StartedAt == nil {
				row.StartedAt = timePtr(cs.State.Running.StartedAt)
			}
		}
	}
	for _, e := range events {
		switch {
		case e.Reason == "Nominated" && e.Source.Component == "karpenter" || e.Reason == "Nominated" && strings.Contains(e.Message, "nodeclaim/"):
			if m := nominatedRe.FindStringSubmatch(e.Message); m != nil && row.NominatedNodeClaim == "" {
				row.NominatedNodeClaim = m[1]
				row.NominatedAt = timePtr(metav1.NewTime(FirstEventTime(e)))
			}
		case e.Reason == "FailedScheduling" && strings.HasPrefix(e.Message, "Failed to schedule pod"):
			row.KarpenterMessage = e.Message
		case e.Reason == "FailedScheduling" && row.PendingReason == "":
			row.PendingReason = e.Message
		}
	}
	return row
}

func requestsOf(p corev1.Pod) string {
	var parts []string
	for _, c := range p.Spec.Containers {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; ok {
				parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
			}
		}
	}
	return strings.Join(parts, ", ")
}

func nodeClaimRow(v *Versions[karpv1.NodeClaim], events []corev1.Event) NodeClaimRow {
	last := v.Last()
	row := NodeClaimRow{
		Name: last.Name, UID: v.UID, NodePool: last.Labels[karpv1.NodePoolLabelKey],
		Created: recorder.CreatedAt(&last), Deleted: v.Deleted,
		InstanceType: last.Labels[corev1.LabelInstanceTypeStable], Zone: last.Labels[corev1.LabelTopologyZone],
		CapacityType: last.Labels[karpv1.CapacityTypeLabelKey],
	}
	failures := map[string]bool{}
	for _, nc := range v.States {
		if nc.Status.ProviderID != "" {
			row.ProviderID = nc.Status.ProviderID
		}
		if nc.Status.NodeName != "" {
			row.NodeName = nc.Status.NodeName
		}
		if nc.DeletionTimestamp != nil && row.DeletionRequested == nil {
			row.DeletionRequested = timePtr(*nc.DeletionTimestamp)
		}
		for _, c := range nc.Status.Conditions {
			t := timePtr(c.LastTransitionTime)
			switch {
			case c.Type == karpv1.ConditionTypeLaunched && c.Status == metav1.ConditionTrue && row.Launched == nil:
				row.Launched = t
			case c.Type == karpv1.ConditionTypeRegistered && c.Status == metav1.ConditionTrue && row.Registered == nil:
				row.Registered = t
			case c.Type == karpv1.ConditionTypeInitialized && c.Status == metav1.ConditionTrue && row.Initialized == nil:
				row.Initialized = t
			case c.Type == karpv1.ConditionTypeDisruptionReason && c.Status == metav1.ConditionTrue:
				row.DisruptionReason = c.Reason
			case c.Status == metav1.ConditionFalse && c.Message != "" &&
				(c.Type == karpv1.ConditionTypeLaunched || c.Type == karpv1.ConditionTypeRegistered):
				failures[c.Type+": "+c.Message] = true
			}
		}
	}
	for _, e := range events {
		if e.Type == corev1.EventTypeWarning {
			failures[e.Reason+": "+e.Message] = true
		}
		if e.Reason == "DisruptionTerminating" && row.DisruptionReason == "" {
			row.DisruptionReason = DisruptionReasonFromMessage(e.Message)
		}
	}
	for f := range failures {
		row.Failures = append(row.Failures, f)
	}
	sort.Strings(row.Failures)
	row.InstanceID = InstanceIDFromProviderID(row.ProviderID)
	return row
}

// DisruptionReasonFromMessage reads "Disrupting NodeClaim: Underutilized/Delete" and the like.
func DisruptionReasonFromMessage(msg string) string {
	if _, after, ok := strings.Cut(msg, ": "); ok {
		reason, _, _ := strings.Cut(after, "/")
		return strings.TrimSpace(reason)
	}
	return msg
}

func nodeRow(v *Versions[corev1.Node]) NodeRow {
	last := v.Last()
	row := NodeRow{
		Name: last.Name, UID: v.UID, ProviderID: last.Spec.ProviderID,
		InstanceID: InstanceIDFromProviderID(last.Spec.ProviderID),
		NodePool:   last.Labels[karpv1.NodePoolLabelKey],
		Registered: recorder.CreatedAt(&last), Deleted: v.Deleted,
	}
	for _, n := range v.States {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && row.Ready == nil {
				row.Ready = timePtr(c.LastTransitionTime)
			}
		}
	}
	return row
}

func launchCalls(audit []trail.AuditEvent) []AuditCall {
	var out []AuditCall
	for _, e := range audit {
		if e.Action != "CreateFleet" && e.Action != "RunInstances" || e.DryRun {
			continue
		}
		c := AuditCall{
			Time: e.Time.UTC(), Action: e.Action, Caller: e.Caller, RequestID: e.RequestID,
			Created: e.Created, ErrorCode: e.ErrorCode, Errors: e.PartialErrors,
			NodeClaim: RequestTag(e.Parameters, "karpenter.sh/nodeclaim"),
			NodePool:  RequestTag(e.Parameters, "karpenter.sh/nodepool"),
		}
		c.Reason = e.DenialReason
		if c.Reason == "" {
			c.Reason = e.ErrorMessage
		}
		out = append(out, c)
	}
	return out
}

// nameLaunchedClaims names the NodeClaim of each launch call whose request carried no
// karpenter.sh/nodeclaim tag (the real provider's CreateFleet tags by NodePool; the
// NodeClaim's name reaches the instance later, by CreateTags) from what it created: the
// instance's tag, else the NodeClaim whose providerID names the instance.
func nameLaunchedClaims(ev *Evidence, byProviderClaim map[string]string) {
	byInstance := map[string]string{}
	for _, in := range ev.Instances {
		if in.NodeClaim != "" {
			byInstance[in.ID] = in.NodeClaim
		}
	}
	for pid, name := range byProviderClaim {
		if id := InstanceIDFromProviderID(pid); id != "" && byInstance[id] == "" {
			byInstance[id] = name
		}
	}
	for i := range ev.Launches {
		c := &ev.Launches[i]
		for _, id := range c.Created {
			if c.NodeClaim == "" {
				c.NodeClaim = byInstance[id]
			}
		}
	}
}

// RequestTag finds a tag's value in a launch call's TagSpecification parameters.
func RequestTag(params map[string]string, key string) string {
	for k, v := range params {
		if v != key || !strings.HasSuffix(k, ".Key") {
			continue
		}
		if val, ok := params[strings.TrimSuffix(k, ".Key")+".Value"]; ok {
			return val
		}
	}
	return ""
}

func findLeaks(ev *Evidence, h *History) []Leak {
	live := map[string]bool{}
	gone := map[string]*time.Time{}
	for _, nc := range ev.NodeClaims {
		if nc.Deleted == nil {
			live[nc.Name] = true
		} else {
			gone[nc.Name] = nc.Deleted
		}
	}
	var leaks []Leak
	for _, in := range ev.Instances {
		if in.State != "running" && in.State != "pending" {
			continue
		}
		if in.Tags["kubernetes.io/cluster/karplab"] != "owned" || live[in.NodeClaim] {
			continue
		}
		since := in.LaunchTime
		if t := gone[in.NodeClaim]; t != nil && t.After(since) {
			since = *t
		}
		leaks = append(leaks, Leak{InstanceID: in.ID, NodeClaim: in.NodeClaim, FleetID: in.FleetID, Since: since, CostUSD: in.CostUSD})
	}
	return leaks
}

func costOf(b billing.Billing) Cost {
	c := Cost{TotalUSD: b.TotalUSD, ByTag: map[string][]billing.CostGroup{}}
	for _, key := range CostTagKeys {
		groups := map[string]*billing.CostGroup{}
		for _, e := range b.Entries {
			v := e.Tags[key]
			g := groups[v]
			if g == nil {
				g = &billing.CostGroup{Value: v}
				groups[v] = g
			}
			g.USD += e.AccruedUSD
			g.Resources = append(g.Resources, e.ResourceID)
		}
		for _, g := range groups {
			g.USD = RoundUSD(g.USD)
			c.ByTag[key] = append(c.ByTag[key], *g)
		}
		sort.Slice(c.ByTag[key], func(i, j int) bool { return c.ByTag[key][i].Value < c.ByTag[key][j].Value })
	}
	for _, e := range b.Entries {
		if e.Stopped == nil {
			c.HourlyNowUSD += e.PricePerHour
		}
	}
	c.HourlyNowUSD = RoundUSD(c.HourlyNowUSD)
	return c
}

// LedgerByResource indexes the billing ledger's entries by the ID of the resource each bills
// (instance, volume, snapshot or interface).
func (s *Snapshot) LedgerByResource() map[string]billing.LedgerEntry {
	out := make(map[string]billing.LedgerEntry, len(s.Billing.Entries))
	for _, e := range s.Billing.Entries {
		out[e.ResourceID] = e
	}
	return out
}

// RoundUSD rounds dollars to the micro-dollar the record prints.
func RoundUSD(f float64) float64 { return float64(int64(f*1e6+0.5)) / 1e6 }

func tagMap(tags []ec2types.Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func appendNew(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

func timePtr(t metav1.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
