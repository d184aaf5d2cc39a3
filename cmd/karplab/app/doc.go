// Package app holds karplab's command-line interface: one file per verb, each a small
// flags struct and a thin action that calls labs, cluster or fakeec2 and prints.
//
// Reports go to stdout, progress and status to stderr. Exit codes: 0 pass, 1 checks
// failed, 2 usage or environment error. It parses flags and prints; it holds no lab logic.
package app
