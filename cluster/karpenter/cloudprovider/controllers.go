package cloudprovider

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/awslabs/operatorpkg/controller"
	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	"go.uber.org/multierr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	nodeclaimutils "sigs.k8s.io/karpenter/pkg/utils/nodeclaim"

	apisv1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

// Karpenter core's garbage collection only removes NodeClaims whose instance is gone; the
// opposite, an instance with no NodeClaim (a leak: Karpenter crashed between CreateFleet and
// the NodeClaim status update, or someone launched one by hand with the tags), is the AWS
// provider's own controller. These are the lab's versions of the two provider controllers
// that touch EC2.

// GCOptions tune the leaked-instance garbage collector.
type GCOptions struct {
	// MinAge spares instances younger than this: their NodeClaim may not record the provider
	// ID yet. Default 30s, as in the real provider.
	MinAge time.Duration
	// Period between sweeps. Default 10s for the first 20 sweeps, then 2m (the real provider's
	// schedule); a non-zero Period is used throughout.
	Period time.Duration
}

// NewControllers returns the provider's controllers: instance garbage collection and
// instance Name tagging. Register them with Karpenter's operator beside its own.
func NewControllers(kube client.Client, cp *CloudProvider, gc GCOptions) []controller.Controller {
	if gc.MinAge == 0 {
		gc.MinAge = 30 * time.Second
	}
	return []controller.Controller{
		&GarbageCollector{kube: kube, cp: cp, opts: gc},
		&Tagger{kube: kube, cp: cp},
	}
}

// GarbageCollector terminates instances of this cluster that no NodeClaim owns.
type GarbageCollector struct {
	kube  client.Client
	cp    *CloudProvider
	opts  GCOptions
	sweep uint64
}

// Reconcile is one sweep: List the cloud provider's instances first (so the NodeClaims read
// after are at least as new), then terminate those no NodeClaim names.
func (g *GarbageCollector) Reconcile(ctx context.Context) (reconciler.Result, error) {
	cloud, err := g.cp.List(ctx)
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("listing cloudprovider nodeclaims: %w", err)
	}
	claims, err := nodeclaimutils.ListManaged(ctx, g.kube, g.cp)
	if err != nil {
		return reconciler.Result{}, err
	}
	owned := sets.New[string]()
	for _, nc := range claims {
		if nc.Status.ProviderID != "" {
			owned.Insert(nc.Status.ProviderID)
		}
	}
	nodes := &corev1.NodeList{}
	if err := g.kube.List(ctx, nodes); err != nil {
		return reconciler.Result{}, err
	}
	now := g.cp.now()
	errs := make([]error, len(cloud))
	workqueue.ParallelizeUntil(ctx, 20, len(cloud), func(i int) {
		nc := cloud[i]
		if !nc.DeletionTimestamp.IsZero() || owned.Has(nc.Status.ProviderID) || now.Sub(nc.CreationTimestamp.Time) <= g.opts.MinAge {
			return
		}
		errs[i] = g.collect(ctx, nc, nodes)
	})
	if err := multierr.Combine(errs...); err != nil {
		return reconciler.Result{}, err
	}
	g.sweep++
	switch {
	case g.opts.Period > 0:
		return reconciler.Result{RequeueAfter: g.opts.Period}, nil
	case g.sweep <= 20:
		return reconciler.Result{RequeueAfter: 10 * time.Second}, nil
	}
	return reconciler.Result{RequeueAfter: 2 * time.Minute}, nil
}

func (g *GarbageCollector) collect(ctx context.Context, nc *karpv1.NodeClaim, nodes *corev1.NodeList) error {
	logger := log.FromContext(ctx).WithValues("provider-id", nc.Status.ProviderID)
	if err := g.cp.Delete(ctx, nc); err != nil {
		return cloudprovider.IgnoreNodeClaimNotFoundError(err)
	}
	logger.Info("garbage collected leaked instance: no NodeClaim owns it")
	for i := range nodes.Items {
		if nodes.Items[i].Spec.ProviderID == nc.Status.ProviderID {
			if err := g.kube.Delete(ctx, &nodes.Items[i]); err != nil {
				return client.IgnoreNotFound(err)
			}
		}
	}
	return nil
}

// Register runs the collector as a singleton loop.
func (g *GarbageCollector) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("instance.garbagecollection").
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(g))
}

// Tagger adds Name=<node name> to an instance once its Node registered, and marks the
// NodeClaim karpenter.k8s.aws/tagged=true, as the real provider's tagging controller does.
type Tagger struct {
	kube client.Client
	cp   *CloudProvider
}

func taggable(nc *karpv1.NodeClaim) bool {
	return nc.Annotations[AnnotationInstanceTagged] != "true" && nc.Status.NodeName != "" &&
		nc.Status.ProviderID != "" && nc.DeletionTimestamp.IsZero()
}

// Reconcile tags one NodeClaim's instance.
func (t *Tagger) Reconcile(ctx context.Context, nc *karpv1.NodeClaim) (reconcile.Result, error) {
	if !taggable(nc) {
		return reconcile.Result{}, nil
	}
	id, err := ParseInstanceID(nc.Status.ProviderID)
	if err != nil {
		return reconcile.Result{}, nil // not ours to fix; a new provider ID triggers a new event
	}
	inst, err := t.cp.getInstance(ctx, id)
	if err != nil {
		return reconcile.Result{}, cloudprovider.IgnoreNodeClaimNotFoundError(err)
	}
	want := map[string]string{apisv1.NameTagKey: nc.Status.NodeName, apisv1.NodeClaimTagKey: nc.Name}
	for k, v := range want {
		if inst.Tags[k] == v {
			delete(want, k)
		}
	}
	if len(want) > 0 {
		if _, err := t.cp.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: ec2Tags(want)}); err != nil {
			if IsNotFound(err) {
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, fmt.Errorf("tagging instance %s: %w", id, err)
		}
	}
	stored := nc.DeepCopy()
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	nc.Annotations[AnnotationInstanceTagged] = "true"
	if err := t.kube.Patch(ctx, nc, client.MergeFrom(stored)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, nil
}

// Register watches this provider's NodeClaims that registered but are not tagged yet.
func (t *Tagger) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("nodeclaim.tagging").
		For(&karpv1.NodeClaim{}, builder.WithPredicates(nodeclaimutils.IsManagedPredicateFuncs(t.cp))).
		WithEventFilter(predicate.NewPredicateFuncs(func(o client.Object) bool {
			nc, ok := o.(*karpv1.NodeClaim)
			return ok && taggable(nc)
		})).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: 10}).
		Complete(reconcile.AsReconciler(m.GetClient(), t))
}
