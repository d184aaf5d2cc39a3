// Command gencatalog writes fakeec2/ec2's instance-type catalog (zz_generated_catalog.go)
// from published data: every type Karpenter's instance-type reference lists, its ENI,
// bandwidth and price facts from karpenter-provider-aws's generated files, and regional
// prices from Apache Libcloud's dump of AWS's Price List. Run it with `go generate
// ./fakeec2/ec2/` (it needs python3-libcloud installed: apt-get install python3-libcloud).
//
// sources.go reads the sources (Karpenter's reference JSON; karpenter-provider-aws's
// generated Go files, parsed as data with go/parser, never compiled in; Libcloud's
// pricing.json and its Python table of Price List attributes; the earlier eu-west-2 CSV),
// facts.go turns them into each type's facts, main.go decides which region offers what at
// which price, render.go writes the Go file with its header of sources. It imports only the
// standard library.
package main
