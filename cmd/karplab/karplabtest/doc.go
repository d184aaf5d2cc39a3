// Package karplabtest gives tests of any package the karplab binary to run as a user
// would: the one make test built once for the whole run (KARPLAB_TEST_BINARY), or one
// built for the test binary that asks; and what tests of several packages share: the real
// clients (aws CLIs, RequireClient), the loopback listener scan, an emulator on loopback,
// the golden-file comparison.
//
// Every layer's tests import it (the root imports_test.go allows it), so it imports nothing
// of the lab above fakeec2.
package karplabtest
