package evidence

import (
	"time"

	"github.com/karplab/karplab/fakeec2/accesskeys"
)

type instView struct {
	Row                  *InstanceRow
	Launched, Terminated stamp
	LaunchedBy           string
	TerminatedBy         string
	Leaked               bool
	CostTags             []string // key=value of the seed's cost tags the instance carries
	Volumes              []volView
	ENIs                 []eniView
}

type volView struct {
	Row            VolumeRow
	Encryption     string
	EncryptedClass string
	Tagged         bool // carries every cost tag
}

type eniView struct {
	Row    ENIRow
	Tagged bool
}

// addInstances fills the instances table, each with its disks and interfaces.
func (p *page) addInstances(ev *Evidence, st func(*time.Time) stamp) {
	leaked := leakedInstances(ev)
	for i := range ev.Instances {
		r := &ev.Instances[i]
		launched := r.LaunchTime
		v := instView{Row: r, Launched: st(&launched), Terminated: st(r.TerminatedAt),
			LaunchedBy: accesskeys.Who(r.LaunchedBy), TerminatedBy: accesskeys.Who(r.TerminatedBy), Leaked: leaked[r.ID]}
		for _, k := range CostTagKeys {
			if val, ok := r.Tags[k]; ok {
				v.CostTags = append(v.CostTags, k+"="+val)
			}
		}
		for _, n := range r.ENIs {
			v.ENIs = append(v.ENIs, eniView{Row: n, Tagged: costTagged(n.Tags)})
		}
		for _, vol := range r.Volumes {
			v.Volumes = append(v.Volumes, newVolView(vol))
		}
		p.Insts = append(p.Insts, v)
	}
}

func newVolView(vol VolumeRow) volView {
	// A deleted volume is no longer described, so whether it was encrypted is not known.
	vv := volView{Row: vol, Encryption: "encryption unknown", EncryptedClass: "muted", Tagged: costTagged(vol.Tags)}
	if vol.Encrypted != nil && *vol.Encrypted {
		vv.Encryption, vv.EncryptedClass = "encrypted", "ok"
	} else if vol.Encrypted != nil {
		vv.Encryption, vv.EncryptedClass = "unencrypted", "bad"
	}
	return vv
}

func costTagged(tags map[string]string) bool {
	for _, k := range CostTagKeys {
		if tags[k] == "" {
			return false
		}
	}
	return true
}

// leakedInstances are the IDs of the leaked instances.
func leakedInstances(ev *Evidence) map[string]bool {
	leaked := map[string]bool{}
	for _, l := range ev.Leaks {
		leaked[l.InstanceID] = true
	}
	return leaked
}
