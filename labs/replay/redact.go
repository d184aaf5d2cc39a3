package replay

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"regexp"
)

// Redacted stands in for every value a capture takes out.
const Redacted = "<redacted>"

// lastApplied copies a whole manifest, env values included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Redactor takes out of a capture what must not leave the cluster, consistently across the
// whole bundle: the same account ID becomes the same pseudonym everywhere, so what refers to
// it still matches. The pseudonyms are keyed by a secret that is not kept: they cannot be
// turned back.
type Redactor struct {
	key      []byte
	accounts map[string]string
}

// NewRedactor returns a Redactor with a fresh key.
func NewRedactor() *Redactor {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return &Redactor{key: key, accounts: map[string]string{}}
}

// arnAccount finds the account ID of an ARN (arn:PARTITION:SERVICE:REGION:ACCOUNT:...).
var arnAccount = regexp.MustCompile(`(arn:aws[a-z-]*:[a-z0-9-]*:[a-z0-9-]*:)([0-9]{12})(:)`)

// Account is the pseudonym of a 12-digit account ID: twelve digits again, never the same.
func (r *Redactor) Account(id string) string {
	if p, ok := r.accounts[id]; ok {
		return p
	}
	for salt := 0; ; salt++ {
		mac := hmac.New(sha256.New, r.key)
		fmt.Fprintf(mac, "%s/%d", id, salt)
		p := fmt.Sprintf("%012d", binary.BigEndian.Uint64(mac.Sum(nil))%1_000_000_000_000)
		if p != id {
			r.accounts[id] = p
			return p
		}
	}
}

// String takes the account IDs out of the ARNs in s.
func (r *Redactor) String(s string) string {
	return arnAccount.ReplaceAllStringFunc(s, func(m string) string {
		parts := arnAccount.FindStringSubmatch(m)
		return parts[1] + r.Account(parts[2]) + parts[3]
	})
}

// Object redacts a Kubernetes object in place: managedFields and the last-applied
// annotation go; every container anywhere in it (a pod, a template, a revision) keeps its
// env names but not their values, and no command or args; an EC2NodeClass's user data goes;
// account IDs in ARNs are pseudonymised.
func (r *Redactor) Object(obj map[string]any) {
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
		if ann, ok := meta["annotations"].(map[string]any); ok {
			delete(ann, lastApplied)
		}
	}
	if obj["kind"] == "EC2NodeClass" {
		if spec, ok := obj["spec"].(map[string]any); ok && spec["userData"] != nil {
			spec["userData"] = Redacted
		}
	}
	r.walk(obj)
}

// walk redacts containers wherever they are, and ARNs in every string.
func (r *Redactor) walk(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "containers", "initContainers", "ephemeralContainers":
				if list, ok := x.([]any); ok {
					for _, c := range list {
						if c, ok := c.(map[string]any); ok {
							redactContainer(c)
						}
					}
				}
			}
			v[k] = r.walk(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = r.walk(x)
		}
		return v
	case string:
		return r.String(v)
	}
	return v
}

// redactContainer keeps what scheduling reads (image aside, resources, ports, probes'
// shape) and takes out what a process is told.
func redactContainer(c map[string]any) {
	if env, ok := c["env"].([]any); ok {
		for _, e := range env {
			if e, ok := e.(map[string]any); ok && e["value"] != nil {
				e["value"] = Redacted
			}
		}
	}
	for _, k := range []string{"command", "args"} {
		if _, ok := c[k]; ok {
			c[k] = []any{Redacted}
		}
	}
}
