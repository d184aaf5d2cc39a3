package pricing

// region is what the price list says about one AWS Region.
type region struct {
	location string // the "location" attribute: "EU (London)"
	prefix   string // the usagetype prefix: "EUW2-" ("" in us-east-1)
}

// regions are the commercial Regions the lab can price, as the EC2 price list names them.
var regions = map[string]region{
	"us-east-1":      {"US East (N. Virginia)", ""},
	"us-east-2":      {"US East (Ohio)", "USE2-"},
	"us-west-1":      {"US West (N. California)", "USW1-"},
	"us-west-2":      {"US West (Oregon)", "USW2-"},
	"ca-central-1":   {"Canada (Central)", "CAN1-"},
	"ca-west-1":      {"Canada West (Calgary)", "CAW1-"},
	"sa-east-1":      {"South America (Sao Paulo)", "SAE1-"},
	"eu-west-1":      {"EU (Ireland)", "EU-"},
	"eu-west-2":      {"EU (London)", "EUW2-"},
	"eu-west-3":      {"EU (Paris)", "EUW3-"},
	"eu-central-1":   {"EU (Frankfurt)", "EUC1-"},
	"eu-central-2":   {"EU (Zurich)", "EUC2-"},
	"eu-north-1":     {"EU (Stockholm)", "EUN1-"},
	"eu-south-1":     {"EU (Milan)", "EUS1-"},
	"eu-south-2":     {"EU (Spain)", "EUS2-"},
	"ap-northeast-1": {"Asia Pacific (Tokyo)", "APN1-"},
	"ap-northeast-2": {"Asia Pacific (Seoul)", "APN2-"},
	"ap-northeast-3": {"Asia Pacific (Osaka)", "APN3-"},
	"ap-southeast-1": {"Asia Pacific (Singapore)", "APS1-"},
	"ap-southeast-2": {"Asia Pacific (Sydney)", "APS2-"},
	"ap-southeast-3": {"Asia Pacific (Jakarta)", "APS4-"},
	"ap-southeast-4": {"Asia Pacific (Melbourne)", "APS6-"},
	"ap-south-1":     {"Asia Pacific (Mumbai)", "APS3-"},
	"ap-south-2":     {"Asia Pacific (Hyderabad)", "APS5-"},
	"ap-east-1":      {"Asia Pacific (Hong Kong)", "APE1-"},
	"me-south-1":     {"Middle East (Bahrain)", "MES1-"},
	"me-central-1":   {"Middle East (UAE)", "MEC1-"},
	"il-central-1":   {"Israel (Tel Aviv)", "ILC1-"},
	"af-south-1":     {"Africa (Cape Town)", "AFS1-"},
}
