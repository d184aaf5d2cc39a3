// Package kubelet is the lab's simulated kubelet fleet. It runs in the lab daemon's process
// and watches the EC2 emulator only through the aws-sdk-go-v2 EC2 client, as a real machine
// only knows what EC2 and its user data tell it. For every running instance tagged
// kubernetes.io/cluster/<cluster>=owned it reads the user data (cluster/bootstrap format),
// "boots" it the way nodeadm and the kubelet would, and registers a Node; then one in-process
// kwok controller per Node (sigs.k8s.io/kwok, the machine's kubelet) keeps it Ready with
// heartbeats and a lease in kube-node-lease, and runs the pods bound to it. When the
// instance leaves running that controller stops, so the Node stops reporting, exactly as a
// dead machine would. A small stand-in for the cloud-controller-manager's node lifecycle
// controller deletes Nodes whose instance no longer exists.
//
// Optionally (Options.ManageKWOKProviderNodes) one more kwok controller keeps the Nodes of
// Karpenter's own kwok provider (label kwok.x-k8s.io/node=fake) Ready, for --provider kwok.
//
// User data may be written for AL2023 (nodeadm), AL2 (bootstrap.sh) or Bottlerocket, by the
// lab's provider or the real karpenter-provider-aws; the Node reports that AMI family's OS.
// With Options.Console set, each boot's console is appended to the instance's console output,
// as GetConsoleOutput shows it: what the user data's scripts printed (script.go evaluates
// their top-level echo, printf and sysctl; it never runs them), cloud-init's end, and the
// outcome (registered, or the failing script or agent), in the order a machine prints them.
//
// Bootstrap can be broken, realistically (a custom user-data script that exits non-zero) or
// programmatically (Kubelet.BreakBootstrap): the instance runs but no Node ever registers.
//
// kwok v0.8's controller has no Stop: a stopped node's controller leaves about five idle
// goroutines behind (its event broadcaster and delay queues), a bounded cost per node lifetime.
//
// It imports cluster/bootstrap, the EC2 SDK, client-go and kwok. It must not import fakeec2
// (tests may), Karpenter, labs or cmd.
package kubelet
