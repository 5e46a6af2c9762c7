#ifndef TPHEAL_TPHEAL_H
#define TPHEAL_TPHEAL_H
#include <tpheal/config.h>
#include <tpheal/error.h>
#include <tpheal/env.h>
#include <tpheal/pool.h>
#include <tpheal/work.h>
#include <tpheal/handle.h>
#include <tpheal/lock.h>
#include <tpheal/wait.h>
#include <tpheal/timer.h>
#include <tpheal/periodic.h>
#include <tpheal/io.h>
#include <tpheal/group.h>
#include <tpheal/trace.h>
#include <tpheal/heal.h>
#include <tpheal/native.h>
#endif
