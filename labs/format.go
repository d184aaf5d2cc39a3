package labs

import (
	"fmt"
	"time"
)

// How the graders print times and counts.

func hms(t time.Time) string { return t.Local().Format("15:04:05.000") }

func hmsPtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return hms(*t)
}

// nouns renders "1 worker" or "3 workers".
func nouns(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// day prints a lab time with its date: a month passes in this lab.
func day(t time.Time) string { return t.Local().Format("Jan 2 15:04:05") }

func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format("15:04:05")
}
