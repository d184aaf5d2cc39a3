package replay

import (
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// What must not leave the cluster does not, and what selectors and the replay need stays: a
// container's env names but not their values, no command or args, no last-applied copy, no
// managedFields, no user data; an account ID becomes the same pseudonym everywhere.
func TestRedactorTakesOutWhatMustNotLeave(t *testing.T) {
	doc := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
  labels: {app: api}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"spec":{"env":"DB_PASSWORD=hunter2"}}'
    role: arn:aws:iam::123456789012:role/api
  managedFields: [{manager: kubectl}]
spec:
  template:
    spec:
      serviceAccountName: api
      initContainers: [{name: init, image: busybox, command: [sh, -c, "curl -H 'token: s3cr3t'"]}]
      containers:
      - name: api
        image: shop/api:1
        args: [--password=hunter2]
        env:
        - {name: DB_PASSWORD, value: hunter2}
        - {name: FROM_SECRET, valueFrom: {secretKeyRef: {name: db, key: pw}}}
        resources: {requests: {cpu: "1", memory: 1Gi}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-prod
  userData: "echo token=s3cr3t"
status:
  instanceProfile: arn:aws:iam::123456789012:instance-profile/prod_123
`
	red := NewRedactor()
	var out []string
	for _, d := range strings.Split(doc, "---\n") {
		var m map[string]any
		if err := sigsyaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		red.Object(m)
		b, _ := sigsyaml.Marshal(m)
		out = append(out, string(b))
	}
	all := strings.Join(out, "---\n")
	for _, secret := range []string{"hunter2", "s3cr3t", "123456789012", "managedFields", "last-applied-configuration"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q left the cluster:\n%s", secret, all)
		}
	}
	pseudo := red.Account("123456789012")
	for _, kept := range []string{"name: DB_PASSWORD", "secretKeyRef", "cpu: \"1\"", "app: api", "arn:aws:iam::" + pseudo + ":role/api",
		"arn:aws:iam::" + pseudo + ":instance-profile/prod_123", "userData: " + Redacted, "role: KarpenterNodeRole-prod"} {
		if !strings.Contains(all, kept) {
			t.Errorf("%q was lost:\n%s", kept, all)
		}
	}
	if len(pseudo) != 12 || pseudo == "123456789012" || red.Account("123456789012") != pseudo {
		t.Errorf("pseudonym %q: want 12 digits, not the account, the same every time", pseudo)
	}
}
