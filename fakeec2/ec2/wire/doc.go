// Package wire holds EC2's wire primitives, the parts of the Query protocol (ec2query,
// version 2016-11-15) that need no server: query.go decodes a form-encoded request into a
// Query (InstanceId.N, Filter.N.Name/Value.M, TagSpecification.N...); errors.go holds the
// one Error type that crosses the wire, EC2's error codes as AWS spells them and Refuse,
// which turns the model's refusal into that Error; xml.go holds the response envelope
// (Header's requestId, the xmlns, the error body) and the shapes every resource family
// shares; filters.go compiles a Describe call's filters over an AttrTable and cuts its
// answer into pages; describe.go holds what every Describe handler shares (Describe's
// knobs, ParseDescribe, then Run or List for one page) so the handlers keep only their
// tables and their lookups. instancetypes.go holds the XML shapes of the instance-type
// actions (DescribeInstanceTypes, ...Offerings, DescribeSpotPriceHistory) and InstanceType,
// which fills one from the model's catalog; the other families' shapes still sit beside
// their handlers in fakeec2.
//
// The handlers in fakeec2 (the root) decode with it, call the model and answer with it.
// It imports only fakeec2/ec2 (the model), fakeec2/account (whose Error every service
// shares) and the standard library: never fakeec2 itself, k8s.io, sigs.k8s.io, cluster or
// labs.
package wire
