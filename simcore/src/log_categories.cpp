/* Parent log categories: "simcore" for the kernel, "simcore_models" for every model.
 * A model declares XBT_LOG_NEW_DEFAULT_SUBCATEGORY(model_<name>, simcore_models, "...").
 * Select them with --log=simcore.thres:debug or --log=model_<name>.thres:debug. */
#include <xbt/log.h>

XBT_LOG_NEW_CATEGORY(simcore, "simcore kernel and models");
XBT_LOG_NEW_SUBCATEGORY(simcore_models, simcore, "simcore models");
