package labs

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestIntegrationRepeatSolutions is the learner's loop, through the CLI: karplab reset,
// karplab lab run NAME --solution, and at once karplab check NAME, which must pass every
// time. KARPLAB_REPEAT=N runs it N times per lab (make test-repeat: 5); it takes about an
// hour, so make test leaves it out.
func TestIntegrationRepeatSolutions(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KARPLAB_REPEAT"))
	if n <= 0 {
		t.Skip("KARPLAB_REPEAT is not set (make test-repeat runs it five times per lab)")
	}
	for _, l := range All() {
		t.Run(l.Name, func(t *testing.T) {
			if f := os.Getenv("KARPLAB_REPEAT_LAB"); f != "" && f != l.Name {
				t.Skip("KARPLAB_REPEAT_LAB=" + f)
			}
			freshLab(t) // each lab's runs hold one lab of the pool; karplab reset starts each run
			for i := 1; i <= n; i++ {
				start := time.Now()
				for _, step := range []string{"karplab reset", "karplab lab run " + l.Name + " --solution", "karplab check " + l.Name} {
					if out, err := runShell(t, kubectlDir(t), step); err != nil {
						t.Fatalf("run %d of %d: %s: %v\n%s", i, n, step, err, out)
					}
				}
				t.Logf("run %d of %d: reset, run --solution, check passed in %s", i, n, time.Since(start).Round(time.Second))
			}
		})
	}
}
