package service

import (
	"encoding/base64"
	"fmt"
	"mime"
	"mime/multipart"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// GetConsoleOutput: the simulated serial console of an instance, the boot log a person
// reads when a node never joins. The emulator does not run the user data, so the log is
// what comes before it runs: the kernel, cloud-init's start and nodeadm reading its
// NodeConfig. Whatever runs it (the lab's kubelet) appends what running it printed with
// AppendConsoleOutput: the scripts' output, cloud-init's end, the kubelet's registration.

// maxConsoleBytes is how much EC2 keeps of the console (the last 64 KiB).
const maxConsoleBytes = 64 << 10

func (s *Service) getConsoleOutput(c *call) (wire.Response, *wire.Error) {
	id := c.q.Str("InstanceId")
	if id == "" {
		return nil, wire.Missing("InstanceId")
	}
	if _, _, err := c.q.Bool("Latest"); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.checkInstanceIDs([]string{id}); e != nil {
		return nil, e
	}
	in := s.model.Instances[id]
	resp := &wire.GetConsoleOutputResponse{InstanceID: id, Timestamp: wire.FormatTime(c.now)}
	if in.State == ec2.StatePending && in.StoppedAt.IsZero() && !c.now.After(in.LaunchTime) {
		return resp, nil // nothing written yet
	}
	out := s.consoleLog(in, c.now)
	if len(out) > maxConsoleBytes {
		out = out[len(out)-maxConsoleBytes:]
	}
	resp.Output = base64.StdEncoding.EncodeToString([]byte(out))
	return resp, nil
}

// consoleLog is the boot log as of now. Callers hold s.mu.
func (s *Service) consoleLog(in *ec2.Instance, now time.Time) string {
	var b strings.Builder
	t := in.LaunchTime
	line := func(sec float64, format string, args ...any) {
		fmt.Fprintf(&b, "[%12.6f] %s\r\n", sec, fmt.Sprintf(format, args...))
	}
	kernel := "6.12.40-63.114.amzn2023.x86_64"
	if in.Architecture == "arm64" {
		kernel = "6.12.40-63.114.amzn2023.aarch64"
	}
	line(0, "Linux version %s (mockbuild@ip-10-0-33-12) (gcc (GCC) 11.5.0 20240719 (Red Hat 11.5.0-5)) #1 SMP", kernel)
	line(0, "Command line: BOOT_IMAGE=(hd0,gpt1)/boot/vmlinuz-%s root=UUID=0f9d5fc6 ro console=tty0 console=ttyS0,115200n8 nvme_core.io_timeout=4294967295", kernel)
	line(0.412, "nvme nvme0: %d/0/0 default/read/poll queues", 2)
	line(1.876, "EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode")
	line(3.214, "systemd[1]: Hostname set to <%s>.", strings.TrimSuffix(in.PrivateDNS, "."+s.region+".compute.internal"))
	// cloud-init starts once the OS is up (running), before anything runs the user data.
	up := in.RunningAt
	if up.Before(t) {
		up = t
	}
	if in.State == ec2.StatePending && up.After(now) {
		return b.String() // still booting
	}
	fmt.Fprintf(&b, "cloud-init[1612]: Cloud-init v. 22.2.2 running 'init' at %s. Up %.2f seconds.\r\n", up.UTC().Format(time.RFC1123Z), up.Sub(t).Seconds())
	fmt.Fprintf(&b, "cloud-init[1612]: ci-info: | eth0 | True | %s | 255.255.224.0 | global | %s |\r\n", in.PrivateIP, s.macOf(in))
	for _, part := range userDataParts(wire.DecodeUserData(in.UserData)) {
		switch {
		case strings.Contains(part.contentType, "node.eks.aws"):
			fmt.Fprintf(&b, "nodeadm[1790]: {\"level\":\"info\",\"msg\":\"Loading configuration\",\"configSource\":\"imds://user-data\"}\r\n")
			for _, l := range strings.Split(strings.TrimSpace(part.body), "\n") {
				if strings.Contains(l, "name:") || strings.Contains(l, "apiServerEndpoint:") || strings.Contains(l, "cidr:") {
					fmt.Fprintf(&b, "nodeadm[1790]: {\"level\":\"info\",\"msg\":\"Config\",\"line\":%q}\r\n", strings.TrimSpace(l))
				}
			}
			fmt.Fprintf(&b, "nodeadm[1790]: {\"level\":\"info\",\"msg\":\"Configuring kubelet\"}\r\n")
		}
	}
	b.WriteString(in.ConsoleExtra)
	if in.State == ec2.StateStopping || in.State == ec2.StateStopped {
		fmt.Fprintf(&b, "[  OK  ] Reached target System Power Off.\r\n")
	}
	return b.String()
}

func (s *Service) macOf(in *ec2.Instance) string {
	if n := s.model.ENIs[in.ENIID]; n != nil {
		return n.MAC
	}
	return ""
}

type userDataPart struct{ contentType, body string }

// userDataParts splits MIME multi-part user data (Karpenter's: the NodeConfig and any
// scripts); anything else is one part.
func userDataParts(ud string) []userDataPart {
	if !strings.HasPrefix(strings.TrimSpace(ud), "MIME-Version") && !strings.Contains(ud, "Content-Type: multipart") {
		return []userDataPart{{contentType: "text/x-shellscript", body: ud}}
	}
	head, body, ok := strings.Cut(strings.ReplaceAll(ud, "\r\n", "\n"), "\n\n")
	if !ok {
		return nil
	}
	var boundary string
	for _, l := range strings.Split(head, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Content-Type") {
			if _, params, err := mime.ParseMediaType(strings.TrimSpace(v)); err == nil {
				boundary = params["boundary"]
			}
		}
	}
	if boundary == "" {
		return nil
	}
	var out []userDataPart
	r := multipart.NewReader(strings.NewReader(body), boundary)
	for {
		p, err := r.NextPart()
		if err != nil {
			break
		}
		var sb strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		out = append(out, userDataPart{contentType: p.Header.Get("Content-Type"), body: sb.String()})
	}
	return out
}

// AppendConsoleOutput adds text to an instance's console log (the lab's kubelet writes
// what its bootstrap did: a failing user-data script's output, nodeadm's errors). The
// console keeps the last 64 KiB.
func (s *Service) AppendConsoleOutput(instanceID, text string) error {
	s.mu.Lock()
	in := s.model.Instances[instanceID]
	if in == nil {
		s.mu.Unlock()
		return fmt.Errorf("appending console output: instance %s does not exist", instanceID)
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	in.ConsoleExtra += strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n")
	if len(in.ConsoleExtra) > maxConsoleBytes {
		in.ConsoleExtra = in.ConsoleExtra[len(in.ConsoleExtra)-maxConsoleBytes:]
	}
	s.save(bucketInstances, in.ID, in)
	wait := s.flushLocked()
	s.mu.Unlock()
	if err := <-wait; err != nil {
		return fmt.Errorf("appending console output to %s: %w", instanceID, err)
	}
	return nil
}
