package kubelet

import (
	"context"
	"fmt"
	"strings"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/cluster/bootstrap"
)

// Console receives what an instance's OS prints on its serial console beyond what EC2 itself
// knows (the emulator already shows the kernel, cloud-init's start and nodeadm reading its
// configuration): what running the user data's scripts printed, cloud-init's end, and how
// bootstrap ended, in the order the machine printed them. fakeec2's *AdminClient satisfies it (POST /_karplab/console),
// so the lines reach GetConsoleOutput, as `aws ec2 get-console-output` shows them on AWS.
type Console interface {
	AppendConsoleOutput(ctx context.Context, instanceID, text string) error
}

// consoleRegistered is what the console shows once the kubelet has registered the node.
func consoleRegistered(f bootstrap.Format, node string, at time.Time) string {
	var b strings.Builder
	ts := at.UTC().Format(time.RFC3339)
	switch f {
	case bootstrap.FormatBottlerocket:
		fmt.Fprintf(&b, "early-boot-config[1402]: Applied settings from user data\r\n")
		fmt.Fprintf(&b, "[  OK  ] Started Kubelet.\r\n")
	case bootstrap.FormatAL2:
		fmt.Fprintf(&b, "cloud-init[1921]: + /etc/eks/bootstrap.sh: kubelet configured\r\n")
		fmt.Fprintf(&b, "[  OK  ] Started Kubernetes Kubelet.\r\n")
	default:
		fmt.Fprintf(&b, "nodeadm[2013]: {\"level\":\"info\",\"ts\":%q,\"msg\":\"Starting daemon\",\"name\":\"kubelet\"}\r\n", ts)
		fmt.Fprintf(&b, "[  OK  ] Started kubelet.service - Kubernetes Kubelet.\r\n")
	}
	fmt.Fprintf(&b, "kubelet[2101]: I%s kubelet_node_status.go:75] \"Attempting to register node\" node=%q\r\n", klogTime(at), node)
	fmt.Fprintf(&b, "kubelet[2101]: I%s kubelet_node_status.go:78] \"Successfully registered node\" node=%q\r\n", klogTime(at), node)
	return b.String()
}

// consoleScriptFailed is cloud-init's report of a user-data script part that exited non-zero
// (cloud-init numbers the parts it writes out part-001, part-002, ...).
func consoleScriptFailed(part, status int, at time.Time) string {
	ts := at.UTC().Format("2006-01-02 15:04:05,000")
	script := fmt.Sprintf("/var/lib/cloud/instance/scripts/part-%03d", part)
	return fmt.Sprintf("cloud-init[1921]: %s - subp.py[WARNING]: Failed running %s [%d]\r\n", ts, script, status) +
		fmt.Sprintf("cloud-init[1921]: %s - cc_scripts_user.py[WARNING]: Failed to run module scripts-user (scripts in /var/lib/cloud/instance/scripts)\r\n", ts) +
		fmt.Sprintf("cloud-init[1921]: %s - log_util.py[WARNING]: Running module scripts-user (<module 'cloudinit.config.cc_scripts_user' from '/usr/lib/python3.9/site-packages/cloudinit/config/cc_scripts_user.py'>) failed\r\n", ts)
}

// consoleScriptOutput is what a script printed (scriptOutput): its output as cloud-init
// copies it, what it wrote to the console device as it is.
func consoleScriptOutput(writes []consoleWrite) string {
	var b strings.Builder
	for _, w := range writes {
		if !w.raw {
			b.WriteString("cloud-init[1921]: ")
		}
		b.WriteString(w.text + "\r\n")
	}
	return b.String()
}

// consoleCloudInitFinished is cloud-init's last line, once it has run the user data's
// scripts (Bottlerocket has no cloud-init).
func consoleCloudInitFinished(f bootstrap.Format, inst ec2types.Instance, at time.Time) string {
	if f == bootstrap.FormatBottlerocket {
		return ""
	}
	up := 31.47
	if inst.LaunchTime != nil && at.After(*inst.LaunchTime) {
		up = at.Sub(*inst.LaunchTime).Seconds()
	}
	return fmt.Sprintf("cloud-init[1921]: Cloud-init v. 22.2.2 finished at %s. Datasource DataSourceEc2Local.  Up %.2f seconds\r\n",
		at.UTC().Format(time.RFC1123Z), up)
}

// consoleBootstrapFailed is the line the node's bootstrap agent dies with.
func consoleBootstrapFailed(f bootstrap.Format, reason string, at time.Time) string {
	switch f {
	case bootstrap.FormatBottlerocket:
		return fmt.Sprintf("early-boot-config[1402]: Error: %s\r\n", reason)
	case bootstrap.FormatAL2:
		return fmt.Sprintf("cloud-init[1921]: /etc/eks/bootstrap.sh: %s\r\n", reason)
	}
	return fmt.Sprintf("nodeadm[1790]: {\"level\":\"fatal\",\"ts\":%q,\"msg\":\"Command failed\",\"error\":%q}\r\n", at.UTC().Format(time.RFC3339), reason)
}

func klogTime(t time.Time) string { return t.UTC().Format("0102 15:04:05.000000") }

// appendConsole hands text to the console, if one is connected; a failure only costs the
// console lines, never the boot.
func (k *Kubelet) appendConsole(ctx context.Context, id, text string) {
	if k.opts.Console == nil || text == "" {
		return
	}
	if err := k.opts.Console.AppendConsoleOutput(ctx, id, text); err != nil && ctx.Err() == nil {
		k.log.Debug("appending to the instance console", "instance", id, "err", err)
	}
}
