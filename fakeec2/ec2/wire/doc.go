// Package wire holds EC2's wire, the Query protocol (ec2query, version 2016-11-15) apart
// from the server: query.go decodes a form-encoded request into a Query (InstanceId.N,
// Filter.N.Name/Value.M, TagSpecification.N...); errors.go holds the one Error type that
// crosses the wire, EC2's error codes as AWS spells them and Refuse, which turns the
// model's refusal into that Error; xml.go holds the response envelope (Header's
// requestId, the xmlns, the error body), the shapes every resource family shares, Items
// (a page of records as an <item> list) and Env, what a conversion needs besides its
// record (account, region, now, the model to look references up in); filters.go compiles
// a Describe call's filters over an AttrTable and cuts its answer into pages; describe.go
// holds what every Describe handler shares (Describe's knobs, ParseDescribe, then Run or
// List for one page) so the handlers keep only their tables and their lookups.
//
// One file per resource family holds its actions' XML shapes (XxxItem, XxxResponse) and
// the conversions that render model records in them: instances.go, interfaces.go,
// volumes.go (and snapshots), images.go, launchtemplates.go, fleets.go, network.go (VPCs,
// subnets, security groups, zones, route tables), account.go (regions, account
// attributes, the lists the lab answers empty), tags.go and instancetypes.go. The
// conversions that need Env are its methods, so a page renders as Items(page,
// env.Volume).
//
// The handlers in fakeec2/ec2/service decode with it, call the model and answer with it.
// It imports only fakeec2/ec2 (the model), fakeec2/account (whose Error every service
// shares) and the standard library: never fakeec2 itself, k8s.io, sigs.k8s.io, cluster or
// labs.
package wire
