/* AscendCL for Tessera: aclInit/aclFinalize and the runtime (acl_rt.h), as Huawei's acl/acl.h
 * declares them. Link tessera_ascendcl (or its alias ascendcl). */
#ifndef TESSERA_ASCENDC_ACL_ACL_H_
#define TESSERA_ASCENDC_ACL_ACL_H_

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* configPath may be NULL; a path names a JSON file, which must exist (its options are not read). */
ACL_FUNC_VISIBILITY aclError aclInit(const char* configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_ASCENDC_ACL_ACL_H_ */
