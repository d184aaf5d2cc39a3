package karplabtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A test drives an aws CLI hundreds of times, and most of each call is Python importing the
// CLI (about a second of CPU on these machines). So AWSCLI.Run hands its command to a
// Python that already imported it: the CLI's own interpreter (its script's #! line) runs
// the CLI's own entry point, awscli.clidriver.main, once per command with that command's
// argv, environment and working directory, its stdout and stderr caught at the file
// descriptors, and reports its exit code. Parsing, validation, pagination, output and
// errors are the CLI's; a new driver and botocore session are made for each command, as a
// process would. Only the interpreter's start is shared.

// cliServer is the Python that answers a command per line of its stdin (JSON: argv, env,
// dir) with a line on fd 3 (JSON: rc, stdout, stderr).
const cliServer = `import json, os, sys, tempfile, traceback
before = dict(os.environ)
import awscli.clidriver
# What importing the CLI set (awscli's AWS_DATA_PATH): a process has it for every command.
imported = {k: v for k, v in os.environ.items() if before.get(k) != v}
answers = os.fdopen(3, "w")
for line in sys.stdin:
    req = json.loads(line)
    os.environ.clear()
    os.environ.update(req["env"])
    os.environ.update(imported)
    os.chdir(req["dir"])
    sys.argv = ["aws"] + req["argv"]
    sys.stdout.flush(); sys.stderr.flush()
    caught, saved = [], []
    for fd in (1, 2):
        f = tempfile.TemporaryFile()
        saved.append(os.dup(fd)); os.dup2(f.fileno(), fd); caught.append(f)
    try:
        rc = awscli.clidriver.main()
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
        rc = 255
    sys.stdout.flush(); sys.stderr.flush()
    out = []
    for fd, f, s in zip((1, 2), caught, saved):
        os.dup2(s, fd); os.close(s)
        f.seek(0); out.append(f.read().decode("utf-8", "replace")); f.close()
    answers.write(json.dumps({"rc": rc if rc is not None else 0, "stdout": out[0], "stderr": out[1]}) + "\n")
    answers.flush()
`

// cliProcess is one running cliServer.
type cliProcess struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	answers *bufio.Reader
}

// cliRequest and cliAnswer are cliServer's protocol.
type cliRequest struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env"`
	Dir  string            `json:"dir"`
}

type cliAnswer struct {
	RC     int    `json:"rc"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// ExitCodeError is a CLI command's non-zero exit code.
type ExitCodeError struct{ Code int }

func (e *ExitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// idleCLIs are the servers no command uses, by CLI path; a busy one is out of the list, so
// tests that run side by side each get one.
var idleCLIs struct {
	sync.Mutex
	byPath map[string][]*cliProcess
}

// interpreter is the Python of the CLI script at path (its #! line).
func interpreter(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	first, _ := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(strings.TrimPrefix(first, "#!"))
	if !strings.HasPrefix(first, "#!") || len(fields) == 0 {
		return "", fmt.Errorf("%s has no #! line naming its Python", path)
	}
	if fields[0] == "/usr/bin/env" && len(fields) > 1 {
		return exec.LookPath(fields[1])
	}
	return fields[0], nil
}

func startCLIServer(path string) (*cliProcess, error) {
	py, err := interpreter(path)
	if err != nil {
		return nil, err
	}
	answersR, answersW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(py, "-c", cliServer)
	cmd.ExtraFiles = []*os.File{answersW}
	cmd.Stderr = os.Stderr // the server's own failures; each command's stderr is caught
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		answersR.Close()
		answersW.Close()
		return nil, err
	}
	answersW.Close()
	go func() { cmd.Wait(); answersR.Close() }()
	return &cliProcess{cmd: cmd, in: in, answers: bufio.NewReader(answersR)}, nil
}

// exec runs one command; the server is not to be used again after an error.
func (p *cliProcess) exec(req cliRequest, timeout time.Duration) (cliAnswer, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return cliAnswer{}, err
	}
	timer := time.AfterFunc(timeout, func() { p.cmd.Process.Kill() })
	defer timer.Stop()
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return cliAnswer{}, fmt.Errorf("the aws CLI's Python: %w", err)
	}
	line, err := p.answers.ReadBytes('\n')
	if err != nil {
		return cliAnswer{}, fmt.Errorf("the aws CLI's Python gave no answer in %s (%w)", timeout, err)
	}
	var a cliAnswer
	return a, json.Unmarshal(line, &a)
}

// serve runs `aws ARGS` in dir with vars (its whole environment) on an idle server of the
// CLI, starting one when none is idle, and returns the CLI's answer.
func (c AWSCLI) serve(vars map[string]string, dir string, timeout time.Duration, args ...string) (cliAnswer, error) {
	idleCLIs.Lock()
	var p *cliProcess
	if idle := idleCLIs.byPath[c.Path]; len(idle) > 0 {
		p, idleCLIs.byPath[c.Path] = idle[len(idle)-1], idle[:len(idle)-1]
	}
	idleCLIs.Unlock()
	if p == nil {
		var err error
		if p, err = startCLIServer(c.Path); err != nil {
			return cliAnswer{}, err
		}
	}
	a, err := p.exec(cliRequest{Argv: args, Env: vars, Dir: dir}, timeout)
	if err != nil {
		p.cmd.Process.Kill()
		return cliAnswer{}, err
	}
	idleCLIs.Lock()
	if idleCLIs.byPath == nil {
		idleCLIs.byPath = map[string][]*cliProcess{}
	}
	idleCLIs.byPath[c.Path] = append(idleCLIs.byPath[c.Path], p)
	idleCLIs.Unlock()
	return a, nil
}

// envVars is env (KEY=VALUE) as a map; a later value wins, as exec's does.
func envVars(env []string) map[string]string {
	vars := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return vars
}

// cliShim is the `aws` a shell finds first on PATH in ShimDir: it hands its argv,
// environment and working directory to the test over a Unix socket and prints the CLI's
// answer. -S: it imports nothing of site-packages, so it starts in a few milliseconds.
const cliShim = `#!%s -S
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(%q)
s.sendall(json.dumps({"argv": sys.argv[1:], "env": dict(os.environ), "dir": os.getcwd()}).encode() + b"\n")
a = json.loads(b"".join(iter(lambda: s.recv(65536), b"")))
sys.stdout.write(a["stdout"])
sys.stderr.write(a["stderr"])
sys.exit(a["rc"])
`

// ShimDir returns a directory, for a shell's PATH, holding an `aws` that runs the CLI's
// commands on its kept-up Python (Run's way) for as long as t runs: scripts and document
// lines run verbatim, through the shell, without a CLI start-up per command.
func (c AWSCLI) ShimDir(t testing.TB) string {
	t.Helper()
	py, err := interpreter(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A socket's path must be short (108 bytes): t.TempDir's may not be.
	sockDir, err := os.MkdirTemp("", "awscli")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); os.RemoveAll(sockDir) })
	if err := os.WriteFile(filepath.Join(dir, "aws"), fmt.Appendf(nil, cliShim, py, sock), 0o755); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go c.answerShim(conn)
		}
	}()
	return dir
}

// answerShim answers one command of cliShim.
func (c AWSCLI) answerShim(conn net.Conn) {
	defer conn.Close()
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	var req cliRequest
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	var a cliAnswer
	if err == nil {
		a, err = c.serve(req.Env, req.Dir, 5*time.Minute, req.Argv...)
	}
	if err != nil {
		a = cliAnswer{RC: 255, Stderr: fmt.Sprintf("karplabtest: the aws shim's command: %v\n", err)}
	}
	b, _ := json.Marshal(a)
	conn.Write(b)
}
