// Package pricing emulates the AWS Price List Query API (awsJson1_1, target prefix
// AWSPriceListService) for one region's price lists: AmazonEC2 (the on-demand catalog) and
// AmazonEKS (cluster fees, Fargate's rates, Auto Mode's fee per instance type; eks.go):
// GetProducts, DescribeServices and GetAttributeValues, answering product documents shaped
// as AWS's so Karpenter's pricing provider parses exactly the catalog's prices and node
// viewers find Fargate's. Another service code gets AWS's NotFoundException.
//
// The catalogs (catalog.go, eks.go, regions.go) are the model and never see JSON; wire.go decodes
// requests, calls it and encodes the answers. The catalog is handed in by fakeec2 at
// construction and nothing is durable: pagination tokens carry their own state, so a
// restart keeps them valid.
//
// This package imports only fakeec2/account and the standard library. It must not import
// fakeec2 itself, k8s.io, sigs.k8s.io, cluster or labs.
package pricing
