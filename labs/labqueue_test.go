package labs

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// longestFirst are the tests that hold a lab longest, longest first (CI's figures, which
// .ci/testtimes prints: the slowest tests and each one's phases). A free lab goes to the
// first of them that waits, then to the others in the order they came: started last, one
// long test alone would decide when the package ends while the other labs stand idle.
var longestFirst = []string{
	"TestIntegrationRunawayDemandExerciseFailsThenFixPasses",
	"TestIntegrationAMIDriftExerciseFailsThenResetAndFixPasses",
	"TestIntegrationInterruptionExerciseFailsThenResetAndFixPasses",
	"TestIntegrationConsolidationExerciseFailsThenFixPasses",
	"TestIntegrationDocsRehearsed/exercises/consolidation",
	"TestIntegrationOrphanedStorageExerciseFailsThenFixPasses",
	"TestIntegrationDocsRehearsed/exercises/orphaned-storage",
	"TestIntegrationProviderHandlesEachMessage",
	"TestIntegrationReplayAdoptsALab",
	"TestIntegrationHappyPathExerciseFailsThenFixPasses",
	"TestIntegrationNodeExpiryExerciseFailsThenFixPasses",
	"TestIntegrationRequestsTruthExerciseFailsThenFixPasses",
	"TestIntegrationConsolidationSolutionPasses",
	"TestIntegrationOrphanedStorageSolutionPasses",
	"TestIntegrationRunawayDemandSolutionPasses",
	"TestIntegrationDocsRehearsed/exercises/ami-drift",
	"TestIntegrationDocsRehearsed/exercises/runaway-demand",
	"TestIntegrationDocsRehearsed/exercises/bootstrap-failure",
	"TestIntegrationNodePoolOverlapExerciseFailsThenFixPasses",
	"TestIntegrationBootstrapFailureExerciseFailsThenFixPasses",
	"TestIntegrationDeniedPathExerciseFailsThenFixPasses",
	"TestIntegrationLeakExerciseFailsThenFixPasses",
	"TestIntegrationDocsRehearsed/exercises/denied-path",
	"TestIntegrationDocsRehearsed/exercises/nodepool-overlap",
}

// gather is how long the first lab waits for the tests go test releases together to queue:
// they all start within it, so the longest of them, not the quickest to arrive, go first.
const gather = time.Second

// labQueue hands the pool's free labs to the tests that wait for one, longest first.
type labQueue struct {
	mu       sync.Mutex
	free     []*testLab
	waiting  []*labWaiter
	arrivals int
	gathered bool
	// inService counts the labs added and not retired.
	inService int
	// retire, when set, takes a lab given back while no test waits and another lab is still
	// in service: every test queues at the start, so the labs of the run's tail stop while
	// the last tests run. The last lab stays for any test that comes late. It is called
	// under mu and must not block.
	retire func(*testLab)
}

type labWaiter struct {
	rank, arrival int
	got           chan *testLab
}

func newLabQueue(labs []*testLab, retire func(*testLab)) *labQueue {
	return &labQueue{free: slices.Clone(labs), inService: len(labs), retire: retire}
}

// add puts a lab that has just started in service.
func (q *labQueue) add(l *testLab) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inService++
	q.free = append(q.free, l)
	q.handOut()
}

// take waits for a lab for the test named name.
func (q *labQueue) take(ctx context.Context, name string) (*testLab, error) {
	rank := slices.Index(longestFirst, name)
	if rank < 0 {
		rank = len(longestFirst)
	}
	q.mu.Lock()
	w := &labWaiter{rank: rank, arrival: q.arrivals, got: make(chan *testLab, 1)}
	q.arrivals++
	q.waiting = append(q.waiting, w)
	if w.arrival == 0 {
		time.AfterFunc(gather, func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.gathered = true
			q.handOut()
		})
	}
	q.handOut()
	q.mu.Unlock()
	select {
	case l := <-w.got:
		return l, nil
	case <-ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		if i := slices.Index(q.waiting, w); i >= 0 {
			q.waiting = slices.Delete(q.waiting, i, i+1)
			return nil, ctx.Err()
		}
		q.free = append(q.free, <-w.got) // handed out as the test ended: keep it for the next
		q.handOut()
		return nil, ctx.Err()
	}
}

// give returns a lab to the queue, or retires it.
func (q *labQueue) give(l *testLab) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.retire != nil && len(q.waiting) == 0 && q.inService > 1 {
		q.inService--
		q.retire(l)
		return
	}
	q.free = append(q.free, l)
	q.handOut()
}

// handOut gives free labs to the waiting tests of lowest rank, then earliest arrival.
// Callers hold q.mu.
func (q *labQueue) handOut() {
	if !q.gathered {
		return
	}
	for len(q.free) > 0 && len(q.waiting) > 0 {
		next := 0
		for i, w := range q.waiting {
			if first := q.waiting[next]; w.rank < first.rank || (w.rank == first.rank && w.arrival < first.arrival) {
				next = i
			}
		}
		w := q.waiting[next]
		q.waiting = slices.Delete(q.waiting, next, next+1)
		w.got <- q.free[0]
		q.free = q.free[1:]
	}
}

// The queue gives its labs to the longest tests that wait, whatever order they came in.
func TestLabQueueLongestFirst(t *testing.T) {
	labs := []*testLab{{}} // one lab: it goes from test to test in the queue's order
	q := newLabQueue(labs, func(*testLab) { t.Error("the only lab was retired") })
	names := []string{"TestShort", longestFirst[2], "TestOther", longestFirst[0]}
	got := make(chan string, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := q.take(t.Context(), name)
			if err != nil {
				t.Error(err)
				return
			}
			got <- name
			q.give(l)
		}()
		for q.arrived() <= i { // they come in this order
			time.Sleep(time.Millisecond)
		}
	}
	wg.Wait()
	close(got)
	var order []string
	for name := range got {
		order = append(order, name)
	}
	if want := []string{longestFirst[0], longestFirst[2], "TestShort", "TestOther"}; !slices.Equal(order, want) {
		t.Errorf("labs went to %v, want %v", order, want)
	}
	if len(q.free) != len(labs) {
		t.Errorf("%d labs free after every test gave its back, want %d", len(q.free), len(labs))
	}
}

// A lab given back while no test waits is retired, unless it is the last in service.
func TestLabQueueRetiresIdleLabs(t *testing.T) {
	first, second := &testLab{}, &testLab{}
	retired := make(chan *testLab, 2)
	q := newLabQueue(nil, func(l *testLab) { retired <- l })
	q.add(first)
	q.add(second)
	for range 2 {
		l, err := q.take(t.Context(), "TestShort")
		if err != nil {
			t.Fatal(err)
		}
		q.give(l)
	}
	if got := <-retired; got != first {
		t.Errorf("retired %p, want the first lab %p", got, first)
	}
	select {
	case l := <-retired:
		t.Errorf("retired the last lab in service too (%p)", l)
	default:
	}
	if len(q.free) != 1 || q.free[0] != second || q.inService != 1 {
		t.Errorf("free %v, %d in service; want the second lab alone", q.free, q.inService)
	}
}

func (q *labQueue) arrived() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.arrivals
}
