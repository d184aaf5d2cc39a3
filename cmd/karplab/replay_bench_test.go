package main_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/karplab/karplab/cluster"
)

// BenchmarkReplayScale replays a generated bundle of 150 nodes and 5,000 pods (no pending
// pod, nothing a WhenEmpty NodePool would consolidate) into a fresh lab: it must load and be
// adopted with no Karpenter action. It reports the load's time, start to ready, and the
// lab's memory once adopted (goals: load at most 60 s, memory under 2 GiB). With
// KARPLAB_BENCH_PROFILES=DIR it saves the daemon's heap profile there.
func BenchmarkReplayScale(b *testing.B) {
	const nodes, pods = 150, 5000
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		writeScaleBundle(b, dir, nodes, pods)
		l := newLab(b)
		begin := time.Now()
		r := l.run("replay", "--ec2-addr", l.ec2Addr, "--watch", "30s", dir)
		ready := time.Since(begin)
		if r.code != 0 {
			b.Fatalf("karplab replay: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		var rss, karpenterRSS int64
		for _, pid := range l.processesOf() {
			rss += vmRSS(pid)
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(cmdline), "karpenter") {
				karpenterRSS += vmRSS(pid)
			}
		}
		rec, err := cluster.Home(l.home).ReadReplayRecord()
		if err != nil {
			b.Fatal(err)
		}
		if rec.Created["Pod"] != pods || rec.Created["Node"] != nodes || !strings.Contains(r.stdout, "did nothing") {
			b.Errorf("replay of %d nodes and %d pods: created %v; report:\n%s", nodes, pods, rec.Created, r.stdout)
		}
		if dir := os.Getenv("KARPLAB_BENCH_PROFILES"); dir != "" {
			saveHeapProfile(b, l.home, filepath.Join(dir, "replay-scale-daemon.heap"))
		}
		l.mustRun("stop")
		b.ReportMetric(rec.LoadTook.Seconds(), "s/load")
		b.ReportMetric(ready.Seconds()-30, "s/ready")
		b.ReportMetric(float64(rss)/(1<<20), "MiB-RSS")
		b.ReportMetric(float64(karpenterRSS)/(1<<20), "MiB-Karpenter")
	}
}

// saveHeapProfile saves the lab daemon's heap profile (go tool pprof FILE) from its control
// endpoint: where the memory of the control plane, the kubelets and the emulator goes.
func saveHeapProfile(tb testing.TB, home, path string) {
	tb.Helper()
	state, err := cluster.Home(home).ReadState()
	if err != nil || state.ControlURL == "" {
		tb.Fatalf("no control endpoint in the daemon's state: %v %+v", err, state)
	}
	resp, err := http.Get(state.ControlURL + "/debug/pprof/heap?gc=1")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("the daemon's heap profile: %s", path)
}

// writeScaleBundle writes a bundle as kubectl get -o yaml would hold a cluster of n nodes
// (m5.4xlarge over three zones of eu-west-2) running p pods of 50 Deployments.
func writeScaleBundle(tb testing.TB, dir string, n, p int) {
	tb.Helper()
	now := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	zones := []string{"eu-west-2a", "eu-west-2b", "eu-west-2c"}
	var docs []any
	add := func(o map[string]any) { docs = append(docs, o) }
	meta := func(name, ns, uid string, extra map[string]any) map[string]any {
		m := map[string]any{"name": name, "uid": uid, "creationTimestamp": now}
		if ns != "" {
			m["namespace"] = ns
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	var subnets, ready []any
	for i, z := range zones {
		subnets = append(subnets, map[string]any{"id": fmt.Sprintf("subnet-0%016x", i+1), "zone": z})
	}
	ready = []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": now}}
	add(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta("shop", "", "ns-shop", nil)})
	add(map[string]any{"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": meta("default", "", "class-default", nil),
		"spec": map[string]any{"role": "KarpenterNodeRole-scale", "amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "scale"}}},
			"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "scale"}}}},
		"status": map[string]any{"subnets": subnets, "securityGroups": []any{map[string]any{"id": "sg-0000000000000001a", "name": "scale-node"}},
			"amis": []any{map[string]any{"id": "ami-0000000000000001a", "name": "amazon-eks-node-al2023-x86_64-standard-1.37-v20261101",
				"requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}}}},
			"instanceProfile": "scale_1234", "conditions": ready}})
	add(map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": meta("default", "", "pool-default", nil),
		"spec": map[string]any{"disruption": map[string]any{"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1h"},
			"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"expireAfter": "720h", "requirements": []any{map[string]any{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": []any{"m"}}}}}},
		"status": map[string]any{"conditions": ready}})
	for i := range n {
		writeScaleNode(add, meta, i, zones[i%len(zones)], now)
	}
	for d := range 50 {
		rs := fmt.Sprintf("web-%d-5d8f7c9b4", d)
		labels := map[string]any{"app": fmt.Sprintf("web-%d", d)}
		tmpl := map[string]any{"metadata": map[string]any{"labels": labels}, "spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx",
			"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "256Mi"}}}}}}
		add(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(fmt.Sprintf("web-%d", d), "shop", fmt.Sprintf("dep-%d", d), nil),
			"spec": map[string]any{"replicas": p / 50, "selector": map[string]any{"matchLabels": labels}, "template": tmpl}})
		add(map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(rs, "shop", fmt.Sprintf("rs-%d", d), map[string]any{
			"labels":          labels,
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": fmt.Sprintf("web-%d", d), "uid": fmt.Sprintf("dep-%d", d), "controller": true}}}),
			"spec": map[string]any{"replicas": p / 50, "selector": map[string]any{"matchLabels": labels}, "template": tmpl}})
		for k := range p / 50 {
			idx := d*(p/50) + k
			node := scaleNodeName(idx % n)
			add(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta(fmt.Sprintf("%s-%05d", rs, k), "shop", fmt.Sprintf("pod-%d", idx), map[string]any{
				"labels":          labels,
				"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": fmt.Sprintf("rs-%d", d), "controller": true}}}),
				"spec": map[string]any{"nodeName": node, "containers": tmpl["spec"].(map[string]any)["containers"]},
				"status": map[string]any{"phase": "Running", "startTime": now, "conditions": []any{
					map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
					map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now}}}})
		}
	}
	var sb strings.Builder
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			tb.Fatal(err)
		}
		sb.WriteString("---\n")
		sb.Write(y)
	}
	karpenter := `apiVersion: apps/v1
kind: Deployment
metadata: {name: karpenter, namespace: kube-system, labels: {app.kubernetes.io/name: karpenter, app.kubernetes.io/instance: karpenter}}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: karpenter}}
  template:
    metadata: {labels: {app.kubernetes.io/name: karpenter}}
    spec:
      containers:
      - name: controller
        image: karpenter
        env: [{name: CLUSTER_NAME, value: scale}, {name: BATCH_MAX_DURATION, value: 10s}]
`
	for name, body := range map[string]string{"cluster.yaml": sb.String(), "karpenter.yaml": karpenter} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// writeScaleNode adds node i: its NodeClaim, as Karpenter left it, and its Node.
func writeScaleNode(add func(map[string]any), meta func(string, string, string, map[string]any) map[string]any, i int, zone, now string) {
	name := scaleNodeName(i)
	claim := fmt.Sprintf("default-%05d", i)
	pid := fmt.Sprintf("aws:///%s/i-0%016x", zone, i+1)
	labels := map[string]any{"karpenter.sh/nodepool": "default", "karpenter.k8s.aws/ec2nodeclass": "default", "karpenter.sh/capacity-type": "on-demand",
		"node.kubernetes.io/instance-type": "m5.4xlarge", "topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "eu-west-2",
		"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "karpenter.sh/registered": "true", "karpenter.sh/initialized": "true",
		"kubernetes.io/hostname": name, "karpenter.k8s.aws/instance-category": "m", "karpenter.k8s.aws/instance-family": "m5",
		"karpenter.k8s.aws/instance-generation": "5", "karpenter.k8s.aws/instance-size": "4xlarge", "karpenter.k8s.aws/instance-cpu": "16",
		"karpenter.k8s.aws/instance-memory": "65536", "karpenter.k8s.aws/instance-hypervisor": "nitro"}
	capacity := map[string]any{"cpu": "16", "memory": "62000Mi", "pods": "234", "ephemeral-storage": "20Gi"}
	allocatable := map[string]any{"cpu": "15890m", "memory": "57000Mi", "pods": "234", "ephemeral-storage": "18Gi"}
	conds := []any{}
	for _, c := range []string{"Launched", "Registered", "Initialized", "Ready"} {
		conds = append(conds, map[string]any{"type": c, "status": "True", "reason": c, "message": "", "lastTransitionTime": now})
	}
	add(map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": meta(claim, "", "claim-"+claim, map[string]any{
		"labels": labels, "finalizers": []any{"karpenter.sh/termination"},
		"ownerReferences": []any{map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "default", "uid": "pool-default", "blockOwnerDeletion": true}}}),
		"spec": map[string]any{"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}, "expireAfter": "720h",
			"requirements": []any{map[string]any{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": []any{"m5.4xlarge"}}}},
		"status": map[string]any{"providerID": pid, "imageID": "ami-0000000000000001a", "nodeName": name, "capacity": capacity, "allocatable": allocatable, "conditions": conds}})
	add(map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": meta(name, "", "node-"+name, map[string]any{
		"labels": labels, "finalizers": []any{"karpenter.sh/termination"},
		"ownerReferences": []any{map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": claim, "uid": "claim-" + claim, "blockOwnerDeletion": true}}}),
		"spec": map[string]any{"providerID": pid},
		"status": map[string]any{"capacity": capacity, "allocatable": allocatable,
			"addresses":  []any{map[string]any{"type": "InternalIP", "address": scaleNodeIP(i)}, map[string]any{"type": "InternalDNS", "address": name}},
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "", "lastHeartbeatTime": now, "lastTransitionTime": now}}}})
}

// Node i is in zone i%3, whose subnet holds 10.0.(i%3).0/24.
func scaleNodeIP(i int) string { return fmt.Sprintf("10.0.%d.%d", i%3, i/3+10) }

func scaleNodeName(i int) string {
	return "ip-" + strings.ReplaceAll(scaleNodeIP(i), ".", "-") + ".eu-west-2.compute.internal"
}
