// zarrd's Status on the wire and back: the code, the message and, when the status has one, its
// reason as a structured detail (zarrd/v1/error.proto). Server and clients convert here only.
#pragma once

#include <grpcpp/support/status.h>

#include "common/util/status.h"

namespace zarrd::wire {

grpc::Status ToGrpcStatus(const Status& status);
Status FromGrpcStatus(const grpc::Status& status);

}  // namespace zarrd::wire
