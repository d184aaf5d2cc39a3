package evidence

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Unattached kinds.
const (
	KindVolume    = "volume"
	KindSnapshot  = "snapshot"
	KindInterface = "network-interface"
)

// clusterName is the lab cluster's name in its ownership tags.
const clusterName = "karplab"

// UnattachedRow is an EBS volume, snapshot or network interface of the cluster that no live
// instance uses: a volume or snapshot bills per GB-month, an interface holds a subnet address.
type UnattachedRow struct {
	Kind string `json:"kind"` // volume, snapshot or network-interface
	ID   string `json:"id"`
	// Detail is what it is: size and type, a snapshot's volume, an interface's address.
	Detail string `json:"detail"`
	// LastInstance is the instance it last served (a snapshot: its volume's), if known.
	LastInstance string `json:"lastInstance,omitempty"`
	NodeClaim    string `json:"nodeClaim,omitempty"` // its karpenter.sh/nodeclaim tag
	// Since is when nothing used it any more: its instance's termination, else its creation.
	Since        time.Time         `json:"since"`
	PricePerHour float64           `json:"pricePerHour"`
	CostUSD      float64           `json:"costUSD"`
	Tags         map[string]string `json:"tags,omitempty"`
}

// ClusterTagged reports whether tags mark a resource as the cluster's: Kubernetes' ownership
// tag (Karpenter's launches), or the cluster-name tag the VPC CNI puts on interfaces it makes.
func ClusterTagged(tags map[string]string) bool {
	return tags["kubernetes.io/cluster/"+clusterName] == "owned" || tags["cluster.k8s.amazonaws.com/name"] == clusterName
}

// findUnattached lists the cluster's available volumes and interfaces, and its snapshots of
// volumes no live instance uses, oldest first.
func findUnattached(s *Snapshot, instances []InstanceRow) []UnattachedRow {
	ledger := s.LedgerByResource()
	// What each volume and interface last served, and whether that instance still lives.
	servedBy := map[string]InstanceRow{}
	for _, in := range instances {
		for _, v := range in.Volumes {
			servedBy[v.ID] = in
		}
		for _, n := range in.ENIs {
			servedBy[n.ID] = in
		}
	}
	since := func(id string, created time.Time) (string, time.Time) {
		in, ok := servedBy[id]
		if !ok {
			return "", created
		}
		if in.TerminatedAt != nil && in.TerminatedAt.After(created) {
			return in.ID, *in.TerminatedAt
		}
		return in.ID, created
	}
	row := func(kind, id, detail string, created time.Time, tags map[string]string) UnattachedRow {
		r := UnattachedRow{Kind: kind, ID: id, Detail: detail, Tags: tags, NodeClaim: tags["karpenter.sh/nodeclaim"]}
		r.LastInstance, r.Since = since(id, created.UTC())
		if l, ok := ledger[id]; ok {
			r.PricePerHour, r.CostUSD = l.PricePerHour, l.AccruedUSD
		}
		return r
	}
	var out []UnattachedRow
	inUse := map[string]bool{}
	for _, v := range s.Volumes {
		id, tags := aws.ToString(v.VolumeId), tagMap(v.Tags)
		if v.State == ec2types.VolumeStateInUse || v.State == ec2types.VolumeStateCreating {
			inUse[id] = true
		}
		if v.State != ec2types.VolumeStateAvailable || !ClusterTagged(tags) {
			continue
		}
		detail := fmt.Sprintf("%s %d GiB in %s", v.VolumeType, aws.ToInt32(v.Size), aws.ToString(v.AvailabilityZone))
		out = append(out, row(KindVolume, id, detail, aws.ToTime(v.CreateTime), tags))
	}
	for _, sn := range s.EBSSnapshots {
		id, vid, tags := aws.ToString(sn.SnapshotId), aws.ToString(sn.VolumeId), tagMap(sn.Tags)
		if inUse[vid] || !ClusterTagged(tags) {
			continue
		}
		r := row(KindSnapshot, id, fmt.Sprintf("%d GiB of %s", aws.ToInt32(sn.VolumeSize), vid), aws.ToTime(sn.StartTime), tags)
		if last, at := since(vid, r.Since); last != "" {
			r.LastInstance, r.Since = last, at
		}
		out = append(out, r)
	}
	for _, n := range s.ENIs {
		id, tags := aws.ToString(n.NetworkInterfaceId), tagMap(n.TagSet)
		if n.Status != ec2types.NetworkInterfaceStatusAvailable || !ClusterTagged(tags) {
			continue
		}
		detail := fmt.Sprintf("%s in %s", aws.ToString(n.PrivateIpAddress), aws.ToString(n.SubnetId))
		if d := aws.ToString(n.Description); d != "" {
			detail += " (" + d + ")"
		}
		var created time.Time // the API tells no interface's creation; the CNI's tag does
		if t, err := time.Parse(time.RFC3339, tags["node.k8s.amazonaws.com/createdAt"]); err == nil {
			created = t
		}
		r := row(KindInterface, id, detail, created, tags)
		if r.Since.IsZero() {
			r.Since = s.TakenAt.UTC()
		}
		if r.LastInstance == "" {
			r.LastInstance = tags["node.k8s.amazonaws.com/instance_id"]
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// UnattachedSummary counts rows by kind, e.g. "4 volumes, 2 snapshots, 2 network-interfaces".
func UnattachedSummary(rows []UnattachedRow) string {
	n := map[string]int{}
	for _, r := range rows {
		n[r.Kind]++
	}
	var parts []string
	for _, k := range []string{KindVolume, KindSnapshot, KindInterface} {
		switch {
		case n[k] == 1:
			parts = append(parts, "1 "+k)
		case n[k] > 1:
			parts = append(parts, fmt.Sprintf("%d %ss", n[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
