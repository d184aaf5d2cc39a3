package nodeclass

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

// ControllerName is the controller's name in the manager (metrics, logs).
const ControllerName = "nodeclass.status"

// DefaultResyncPeriod is how often an EC2NodeClass is resolved again without a change to
// it, so that subnets, security groups and AMIs created or tagged in EC2 show up.
const DefaultResyncPeriod = time.Minute

// Controller keeps EC2NodeClass status and the drift hash annotation current. It has the
// Register(ctx, manager) shape of Karpenter's controllers (operatorpkg's
// controller.Controller), so the Karpenter runner adds it beside Karpenter core's.
type Controller struct {
	kube     client.Client
	resolver *Resolver
	resync   time.Duration
	log      *slog.Logger
}

// ControllerOptions configure a Controller.
type ControllerOptions struct {
	// ResyncPeriod; zero means DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Logger; nil logs nothing.
	Logger *slog.Logger
}

// NewController returns a Controller that reads and patches EC2NodeClasses through kube
// and resolves them with resolver.
func NewController(kube client.Client, resolver *Resolver, opts ControllerOptions) *Controller {
	if opts.ResyncPeriod == 0 {
		opts.ResyncPeriod = DefaultResyncPeriod
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Controller{kube: kube, resolver: resolver, resync: opts.ResyncPeriod, log: opts.Logger}
}

// Reconcile stamps the hash annotations, resolves the node class and patches its status
// when it changed. A failed EC2 call is returned (controller-runtime retries with
// backoff) after the rest of the status has been written.
func (c *Controller) Reconcile(ctx context.Context, nc *v1.EC2NodeClass) (reconcile.Result, error) {
	// No finalizer: there is nothing outside the API server to clean up.
	if !nc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	log := c.log.With("ec2nodeclass", nc.Name)

	if stored := nc.DeepCopy(); SetHashAnnotations(nc) {
		if err := c.kube.Patch(ctx, nc, client.MergeFrom(stored)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching hash annotation: %w", err))
		}
		log.Debug("stamped drift hash", "hash", nc.Annotations[v1.AnnotationEC2NodeClassHash])
	}

	stored := nc.DeepCopy()
	resolveErr := c.resolver.Resolve(ctx, nc)
	if !equality.Semantic.DeepEqual(stored.Status, nc.Status) {
		// Optimistic lock: a merge patch replaces the whole conditions list, so a
		// concurrent writer must not be overwritten silently.
		if err := c.kube.Status().Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{RequeueAfter: time.Second}, nil
			}
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("patching status: %w", err))
		}
		ready := nc.StatusConditions().Root()
		log.Debug("status updated", "ready", ready.GetStatus(), "reason", ready.Reason, "message", ready.Message,
			"subnets", len(nc.Status.Subnets), "securityGroups", len(nc.Status.SecurityGroups), "amis", len(nc.Status.AMIs))
	}
	if resolveErr != nil {
		return reconcile.Result{}, fmt.Errorf("resolving ec2nodeclass %s: %w", nc.Name, resolveErr)
	}
	return reconcile.Result{RequeueAfter: c.resync}, nil
}

// SetHashAnnotations sets the drift hash and hash version annotations to nc's current
// values and reports whether they changed.
func SetHashAnnotations(nc *v1.EC2NodeClass) bool {
	hash := nc.Hash()
	if nc.Annotations[v1.AnnotationEC2NodeClassHash] == hash &&
		nc.Annotations[v1.AnnotationEC2NodeClassHashVersion] == v1.EC2NodeClassHashVersion {
		return false
	}
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	nc.Annotations[v1.AnnotationEC2NodeClassHash] = hash
	nc.Annotations[v1.AnnotationEC2NodeClassHashVersion] = v1.EC2NodeClassHashVersion
	return true
}

// Name is the controller's name.
func (c *Controller) Name() string { return ControllerName }

// Register adds the controller to m. It reacts to spec changes (generation) and to
// annotation changes (someone removed the hash), not to its own status writes; the
// resync period covers changes made in EC2.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named(ControllerName).
		For(&v1.EC2NodeClass{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{},
		))).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}
