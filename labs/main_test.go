package labs

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/existing/existingtest"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// The labs' integration tests run in parallel on a pool of labs, each a karplab daemon
// (the real binary, a child of this test process) with the existing backend on a cluster of
// its own that plays somebody else's (existingtest, in a child process: one control plane
// per process). A test takes a free lab (freshLab; the longest tests first, labqueue_test.go),
// resets it and gives it back when it ends, so every lab is proved on a cluster with a
// namespace, node and workload of its own; at the end `stop --uninstall` must leave each such cluster exactly as it was.
var pool struct {
	queue   *labQueue     // the labs no test holds, and the tests that wait for one
	started chan struct{} // closed when every lab has started
	once    sync.Once     // starts the pool (ensurePool)
	err     error         // why it did not start
	stop    func() error  // stops every lab, once the pool has started
	held    sync.Map      // *testing.T -> *testLab
}

// testLab is one lab of the pool.
type testLab struct {
	env    *Env
	home   cluster.Home
	theirs *existingtest.Process
	before *existingtest.Snapshot
	daemon *exec.Cmd
	exited chan error
}

// poolSize is how many labs run side by side (KARPLAB_TEST_LABS, default 6): the labs'
// tests mostly wait on Karpenter's and the emulator's own timers, so the time they hold a
// lab barely grows with more labs. On two cores, with nothing else running, make test
// measured (labs package, whole run): 4 labs 445 s and 8m51s, 6 labs 334 s and 8m07s, 8
// labs 284 s and 8m00s. Past 6 the other packages end the run, and the time each test held
// a lab grew by 8%.
func poolSize() int {
	if n, err := strconv.Atoi(os.Getenv("KARPLAB_TEST_LABS")); err == nil && n > 0 {
		return n
	}
	return 6
}

func TestMain(m *testing.M) {
	existingtest.RunIfChild()
	flag.Parse()
	// Every test queues for a lab at once, so the longest take the first labs; the pool keeps
	// as many at work as there are labs (unless -parallel says fewer).
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", "1000")
	}
	code := m.Run()
	if pool.stop != nil {
		if err := pool.stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// ensurePool starts the pool the first time a test needs a lab, so a run that selects no
// integration test (-run, -short) starts none. It skips the test under -short.
func ensurePool(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no lab is started")
	}
	pool.once.Do(func() { pool.stop, pool.err = startPool(poolSize()) })
	if pool.err != nil {
		t.Fatalf("starting the labs: %v", pool.err)
	}
}

// binary is the karplab binary the labs' daemons run, built once per test process (or
// KARPLAB_TEST_BINARY's).
var binary struct {
	once sync.Once
	exe  string // the binary, for the daemons and for scripts that call it
	dir  string // where it was built (removed at the end)
	err  error
}

func labBinary() (string, error) {
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "karplab-labs-bin"); binary.err == nil {
			binary.exe, binary.err = karplabtest.Binary(binary.dir)
		}
	})
	return binary.exe, binary.err
}

// startPool starts n labs side by side and returns what stops them all. Each lab serves
// tests as soon as it is ready, and a lab the run's tail no longer needs stops while the
// last tests run (labQueue.retire). A lab that fails to start ends the run.
func startPool(n int) (stop func() error, err error) {
	dir, err := os.MkdirTemp("", "karplab-labs-test")
	if err != nil {
		return nil, err
	}
	if _, err = labBinary(); err != nil {
		return nil, err
	}
	var (
		mu      sync.Mutex
		stopErr []error
		stops   sync.WaitGroup // the labs retired early
	)
	stopLab := func(l *testLab) {
		err := l.stop()
		mu.Lock()
		stopErr = append(stopErr, err)
		mu.Unlock()
	}
	pool.queue = newLabQueue(nil, func(l *testLab) { stops.Go(func() { stopLab(l) }) })
	pool.started = make(chan struct{})
	var starting sync.WaitGroup
	for i := range n {
		starting.Go(func() {
			l, err := startLab(filepath.Join(dir, fmt.Sprintf("lab%d", i+1)))
			if err != nil {
				// Tests may be running on the other labs: end the run, and with it every
				// child (they end with this process).
				fmt.Fprintf(os.Stderr, "starting lab %d: %v\n", i+1, err)
				os.RemoveAll(dir)
				os.Exit(2)
			}
			pool.queue.add(l)
		})
	}
	go func() {
		starting.Wait()
		close(pool.started)
	}()
	stop = func() error {
		<-pool.started
		pool.queue.mu.Lock()
		left := pool.queue.free // every test has ended: the labs not yet retired
		pool.queue.free = nil
		pool.queue.mu.Unlock()
		for _, l := range left { // side by side, as they started: each uninstall mostly waits
			stops.Go(func() { stopLab(l) })
		}
		stops.Wait()
		if os.Getenv("KARPLAB_KEEP_TEST_HOME") == "" {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "lab homes kept under", dir)
		}
		return errors.Join(stopErr...)
	}
	return stop, nil
}

// startLab starts their cluster and the lab's daemon on it, under dir.
func startLab(dir string) (*testLab, error) {
	ctx := context.Background()
	theirs, err := existingtest.StartProcess(ctx, filepath.Join(dir, "their-cluster"))
	if err != nil {
		return nil, fmt.Errorf("starting their cluster: %w", err)
	}
	l := &testLab{home: cluster.Home(filepath.Join(dir, "home")), theirs: theirs}
	cfg, err := theirs.RESTConfig()
	if err == nil {
		l.before, err = existingtest.TakeSnapshot(ctx, cfg)
	}
	if err == nil {
		err = l.startDaemon(ctx, cluster.StartOptions{Backend: "existing", Kubeconfig: l.theirs.Kubeconfig, Provider: testProvider()})
	}
	if err == nil {
		l.env, err = NewEnv(ctx, l.home)
	}
	if err != nil {
		return nil, errors.Join(err, l.stop())
	}
	return l, nil
}

// startDaemon runs the daemon as `karplab start` with opts would (its EC2 address a free
// port), but as this process's child (it ends with the test binary), and waits until it is
// ready.
func (l *testLab) startDaemon(ctx context.Context, opts cluster.StartOptions) error {
	for try := 1; ; try++ {
		// The free port this process found may be taken before the daemon listens on it.
		if err := l.startDaemonOnce(ctx, opts); !errors.Is(err, errPortTaken) || try == 3 {
			return err
		}
	}
}

var errPortTaken = errors.New("the EC2 emulator's port was taken before the daemon listened on it")

func (l *testLab) startDaemonOnce(ctx context.Context, opts cluster.StartOptions) error {
	if err := l.home.Ensure(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	opts.EC2Addr = ln.Addr().String()
	ln.Close()
	logFile, err := os.Create(l.home.DaemonLog())
	if err != nil {
		return err
	}
	defer logFile.Close()
	l.daemon = exec.Command(binary.exe, opts.DaemonArgs()...)
	l.daemon.Env = append(os.Environ(), "KARPLAB_HOME="+string(l.home))
	l.daemon.Stdout, l.daemon.Stderr = logFile, logFile
	l.daemon.SysProcAttr = endsWithParent()
	if err := l.daemon.Start(); err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	l.exited = make(chan error, 1)
	go func() { l.exited <- l.daemon.Wait() }()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := l.home.ReadState()
		if err == nil && st.Phase == cluster.PhaseReady {
			return nil
		}
		if err == nil && st.Phase == cluster.PhaseFailed {
			return errors.New(st.Error)
		}
		select {
		case err := <-l.exited:
			l.exited <- err
			// The log goes with the run's directory: its tail is the error's.
			b, _ := os.ReadFile(l.home.DaemonLog())
			tail := string(b[max(0, len(b)-2000):])
			if strings.Contains(tail, "address already in use") {
				return errPortTaken
			}
			return fmt.Errorf("the daemon ended during start-up (%v); its log ends:\n%s", err, tail)
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the lab was not ready after 5 minutes; see %s", l.home.DaemonLog())
		}
	}
}

// stop is stop --uninstall, as a user ends a lab on their cluster (reset, stop, uninstall),
// then the check that their cluster is as it was, then their cluster's end.
func (l *testLab) stop() error {
	var progress strings.Builder
	var err error
	if l.daemon != nil {
		ctx := context.Background()
		err = cluster.Reset(ctx, l.home, &progress)
		err = errors.Join(err, cluster.Stop(ctx, l.home, time.Minute, &progress))
		<-l.exited
		if err == nil {
			err = cluster.Uninstall(ctx, l.home, &progress)
		}
		if err == nil {
			err = l.theyAreAsBefore()
		}
		if err != nil {
			err = fmt.Errorf("stop --uninstall on their cluster (%s): %w\n%s", l.home, err, progress.String())
		} else {
			fmt.Fprintf(os.Stderr, "stop --uninstall left their cluster (%s) as it was:\n%s", l.home, progress.String())
		}
	}
	return errors.Join(err, l.theirs.Stop())
}

// theyAreAsBefore compares every API object of their cluster with the snapshot taken before
// the lab started on it.
func (l *testLab) theyAreAsBefore() error {
	cfg, err := l.theirs.RESTConfig()
	if err != nil {
		return err
	}
	after, err := existingtest.TakeSnapshot(context.Background(), cfg)
	if err != nil {
		return err
	}
	if diff := existingtest.Diff(l.before, after); len(diff) > 0 {
		return fmt.Errorf("their cluster is not as it was (%d differences):\n  %s", len(diff), strings.Join(diff, "\n  "))
	}
	return nil
}

// testProvider is the Karpenter cloud provider the labs run on: the real
// karpenter-provider-aws unless KARPLAB_TEST_PROVIDER names another.
func testProvider() string {
	if p := os.Getenv("KARPLAB_TEST_PROVIDER"); p != "" {
		return p
	}
	return karpenter.ProviderAWS
}

// freshLab marks the test parallel, takes a lab of the pool for it (until it ends), resets
// it and returns it; it skips the test when there is no lab.
func freshLab(t *testing.T) *Env {
	t.Helper()
	ensurePool(t)
	t.Parallel()
	start := time.Now()
	l, err := pool.queue.take(t.Context(), t.Name())
	if err != nil {
		t.Fatal("no lab came free before the test ended")
	}
	logPhase(t, "queue", time.Since(start))
	pool.held.Store(t, l)
	l.env.Timed = func(phase string, took time.Duration) { logPhase(t, phase, took) }
	t.Cleanup(func() {
		l.env.Timed = nil
		pool.held.Delete(t)
		pool.queue.give(l)
	})
	var progress strings.Builder
	start = time.Now()
	if err := cluster.Reset(t.Context(), l.home, &progress); err != nil {
		t.Fatalf("resetting the lab: %v\n%s", err, progress.String())
	}
	logPhase(t, "reset", time.Since(start))
	t.Logf("the reset's steps:\n%s", progress.String())
	return l.env
}

// shareLab lets subtest sub use the lab its parent holds.
func shareLab(parent, sub *testing.T) {
	pool.held.Store(sub, labOf(parent))
	sub.Cleanup(func() { pool.held.Delete(sub) })
}

// labOf is the lab t holds (freshLab).
func labOf(t *testing.T) *testLab {
	t.Helper()
	l, ok := pool.held.Load(t)
	if !ok {
		t.Fatal("the test holds no lab: call freshLab first")
	}
	return l.(*testLab)
}

// logPhase says how long a phase of the test took, in the form .ci/testtimes tables.
func logPhase(t *testing.T, phase string, took time.Duration) {
	t.Logf("phase: %s %s", phase, took.Round(10*time.Millisecond))
}

// testOut collects a test's progress output, each line stamped with the seconds since the
// test began. It is shown when the test fails, or always with KARPLAB_TEST_PROGRESS=1 (where
// a passing test's time goes).
func testOut(t *testing.T) io.Writer {
	t.Helper()
	p := &progressLog{start: time.Now(), lineStart: true}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("KARPLAB_TEST_PROGRESS") == "1" {
			t.Logf("progress:\n%s", p.String())
		}
		if t.Failed() {
			t.Logf("Karpenter's last lines (debug left out):\n%s", karpenterTail(t, 40))
		}
	})
	return p
}

// progressLog is testOut's writer; stages write to it from several goroutines.
type progressLog struct {
	mu        sync.Mutex
	start     time.Time
	b         strings.Builder
	lineStart bool
}

func (p *progressLog) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if p.lineStart {
			fmt.Fprintf(&p.b, "%6.1fs ", time.Since(p.start).Seconds())
		}
		p.b.WriteString(line)
		p.lineStart = strings.HasSuffix(line, "\n")
	}
	return len(b), nil
}

func (p *progressLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.String()
}

// karpenterTail is the end of the lab's Karpenter log without its debug lines: why a
// staging stalled is usually there.
func karpenterTail(t *testing.T, n int) string {
	l, ok := pool.held.Load(t)
	if !ok {
		return ""
	}
	b, err := os.ReadFile(l.(*testLab).home.KarpenterLog())
	if err != nil {
		return err.Error()
	}
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(line, `"level":"DEBUG"`) {
			if len(line) > 600 {
				line = line[:600] + "..."
			}
			keep = append(keep, line)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "\n")
}

// checkUntil grades lab repeatedly until its verdict is want (or timeout), returning the last report.
// solutionPasses is each lab's first test: on a fresh lab, lab run NAME --solution (staging
// waits up to wait), then check until it passes (within grace). It keeps the snapshot
// under snapshot (KARPLAB_SNAPSHOT_DIR; "" keeps none), logs the report and returns the lab
// and the report for the lab's own assertions.
func solutionPasses(t *testing.T, name string, wait, grace time.Duration, snapshot string) (*Env, *Report) {
	t.Helper()
	return solutionPassesOn(t, freshLab(t), name, wait, grace, snapshot)
}

// solutionPassesOn is solutionPasses on lab e, which the test holds already.
func solutionPassesOn(t *testing.T, e *Env, name string, wait, grace time.Duration, snapshot string) (*Env, *Report) {
	t.Helper()
	l, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: wait}); err != nil {
		t.Fatal(err)
	}
	r := checkUntil(t, e, l, true, grace)
	if !r.Passed {
		t.Fatalf("the solution does not pass:\n%s", reportText(r))
	}
	if snapshot != "" {
		keepSnapshot(t, e, snapshot)
	}
	t.Logf("%s staged and solved in %s:\n%s", name, time.Since(start).Round(time.Second), reportText(r))
	return e, r
}

func checkUntil(t *testing.T, e *Env, l *Lab, want bool, timeout time.Duration) *Report {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r, err := l.Check(t.Context(), e)
		if err != nil {
			t.Fatalf("check %s: %v", l.Name, err)
		}
		for _, c := range r.Checks {
			for _, x := range c.contradictions() {
				t.Errorf("the verdict contradicts its lines: %s", x)
			}
		}
		if r.Passed == want || time.Now().After(deadline) {
			return r
		}
		time.Sleep(2 * time.Second)
	}
}

// runScript runs a lab's shell script (solutions/NAME/commands.sh) as a learner would after
// eval "$(karplab env)", with Debian's aws CLI; it returns the script's output.
func runScript(t *testing.T, path string) string {
	t.Helper()
	out, err := runShell(t, debianAWSDir(t), `exec sh "$2"`, path)
	if err != nil {
		t.Fatalf("sh %s: %v\n%s", path, err, out)
	}
	return out
}

// debianAWSDir holds the `aws` the labs' shells run: Debian's CLI (the course's), its Python
// kept up between commands (karplabtest's ShimDir), behind the lab's own aws wrapper.
func debianAWSDir(t *testing.T) string {
	t.Helper()
	return karplabtest.AWSCLI{Name: "v2", Path: karplabtest.DebianAWSCLI(t)}.ShimDir(t)
}

// runShell runs script in sh after eval of the lab's env file, as a learner's shell would:
// binDirs (one or more directories, colon-separated: the aws CLI's) on PATH, behind what the
// env puts first (the aws wrapper, and karplab itself: the test adds no karplab of its own,
// so a script that calls karplab proves the env makes it reachable); the lab's kubeconfig
// and credentials in the environment. args are $2, ...
func runShell(t *testing.T, binDirs, script string, args ...string) (string, error) {
	t.Helper()
	home := labOf(t).home
	cmd := exec.CommandContext(t.Context(), "sh", append([]string{"-c", `eval "$(cat "$1")"; ` + script, "sh", home.EnvFile()}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+binDirs+":/usr/bin:/bin", "KARPLAB_HOME="+string(home), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func reportText(r *Report) string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}
